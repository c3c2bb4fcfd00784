"""When the Observer and the Reflector run, and how a long conversation is cut (seed 004:
token thresholds trigger them; an over-budget conversation is read in chunks, in order,
within that conversation only; under budget it is one pass)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.observation.canonical import conversation_turns, estimated_tokens
from memmesh.observation.model import Observation, ObservedTurn

# What a turn costs in a prompt beyond its words: its id, role and separators.
TURN_OVERHEAD_TOKENS = 8


def turn_tokens(turn: ObservedTurn) -> int:
    """Estimated prompt tokens of one turn."""
    return estimated_tokens(turn.text) + TURN_OVERHEAD_TOKENS


def observation_tokens(observations: Sequence[Observation]) -> int:
    """Estimated prompt tokens of observations."""
    return sum(estimated_tokens(o.text) + TURN_OVERHEAD_TOKENS for o in observations)


@dataclass(frozen=True)
class ObservationPlanner:
    """Thresholds and the chunk budget, from ObservationSettings."""

    message_threshold_tokens: int
    observation_threshold_tokens: int
    chunk_budget_tokens: int

    def should_observe(self, unobserved: Sequence[ObservedTurn]) -> bool:
        """Whether the turns not yet observed are enough for an Observer pass."""
        return sum(turn_tokens(t) for t in unobserved) >= self.message_threshold_tokens

    def should_reflect(self, observations: Sequence[Observation]) -> bool:
        """Whether a thread's observations are enough for a Reflector pass."""
        return observation_tokens(observations) >= self.observation_threshold_tokens

    def chunks(
        self, conversation_id: str, turns: Sequence[ObservedTurn]
    ) -> tuple[tuple[ObservedTurn, ...], ...]:
        """The conversation's turns in reading order, cut greedily into chunks of at most
        the chunk budget (a turn over the budget alone is a chunk of its own); one chunk
        when the whole conversation fits. Raise InvalidInput on mixed conversations."""
        ordered = conversation_turns(conversation_id, turns)
        chunks: list[tuple[ObservedTurn, ...]] = []
        current: list[ObservedTurn] = []
        used = 0
        for turn in ordered:
            cost = turn_tokens(turn)
            if current and used + cost > self.chunk_budget_tokens:
                chunks.append(tuple(current))
                current, used = [], 0
            current.append(turn)
            used += cost
        if current:
            chunks.append(tuple(current))
        return tuple(chunks)
