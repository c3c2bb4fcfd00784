"""The Observer (seed 004 T1): one conversation's turns in, bounded observations with
provenance out, one result per chunk. The model answers in `semantic_with_fallback` mode; the
rules answer in `deterministic_only` mode and whenever the model's batch fails."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from memmesh.extraction.semantic.provider import ChatCompletionsProvider
from memmesh.extraction.semantic.redaction import redact
from memmesh.observation.canonical import (
    content_hash,
    conversation_turns,
    observations_output,
    observer_input,
)
from memmesh.observation.guardrails import Limits, Provider, Run, ask, messages_tokens
from memmesh.observation.model import Observation, ObservedTurn, ObserverResult
from memmesh.observation.planner import ObservationPlanner
from memmesh.observation.prompts import PROMPTS, observer_messages
from memmesh.observation.rules_observer import observe_by_rules
from memmesh.observation.schema import parse_observer_reply
from memmesh.observation.settings import ObservationSettings
from memmesh.observation.validation import validate_observations

# What the deterministic rules record as their provider, model and version.
RULES_PROVIDER = "rules"
RULES_VERSION = "observation-rules-2025.1"
# Room a retry needs on top of the first prompt: the rejected reply and the guidance.
_GUIDANCE_TOKENS = 120


def limits_of(settings: ObservationSettings) -> Limits:
    """The guardrails of one batch, from the settings."""
    return Limits(
        timeout_s=settings.timeout_s,
        max_attempts=settings.max_retries + 1,
        max_input_tokens=settings.max_input_tokens,
        max_output_tokens=settings.max_output_tokens,
        batch_token_budget=settings.batch_token_budget,
    )


def planner_of(settings: ObservationSettings) -> ObservationPlanner:
    """The planner, its chunk budget what one prompt leaves for turns after its fixed text
    and room for a retry's guidance."""
    fixed = messages_tokens(observer_messages(PROMPTS[settings.prompt_version], [], 1))
    room = settings.max_input_tokens - fixed - settings.max_output_tokens - _GUIDANCE_TOKENS
    return ObservationPlanner(
        message_threshold_tokens=settings.message_threshold_tokens,
        observation_threshold_tokens=settings.observation_threshold_tokens,
        chunk_budget_tokens=max(room, 64),
    )


def provider_of(settings: ObservationSettings, provider: Provider | None) -> Provider | None:
    """The model provider in `semantic_with_fallback` mode (the one given, else a
    chat-completions client to the configured endpoint); None in `deterministic_only` mode."""
    if settings.mode != "semantic_with_fallback":
        return None
    return provider or ChatCompletionsProvider(settings.provider_config())


class Observer:
    """Observes one conversation at a time; never raises for provider trouble."""

    def __init__(self, settings: ObservationSettings, provider: Provider | None = None) -> None:
        self._settings = settings
        self._prompt = PROMPTS[settings.prompt_version]
        self._limits = limits_of(settings)
        self.planner = planner_of(settings)
        self._provider = provider_of(settings, provider)

    async def observe(
        self, conversation_id: str, turns: Sequence[ObservedTurn]
    ) -> tuple[ObserverResult, ...]:
        """One result per chunk of the conversation, in reading order (one when it fits);
        raise InvalidInput when a turn belongs to another conversation."""
        ordered = conversation_turns(conversation_id, turns)
        return tuple(
            [
                await self._batch(conversation_id, chunk)
                for chunk in self.planner.chunks(conversation_id, ordered)
            ]
        )

    async def _batch(self, conversation_id: str, turns: Sequence[ObservedTurn]) -> ObserverResult:
        started = time.monotonic()
        cap = self._settings.max_observations
        observations: tuple[Observation, ...] | None = None
        run = Run(RULES_PROVIDER, "", RULES_VERSION)
        if self._provider is not None:
            # Nothing leaves the mesh before redaction; the reply is checked against what was sent.
            sent = [replace(t, text=redact(t.text).text) for t in turns]
            texts = {t.turn_id: t.text for t in sent}
            outcome = await ask(
                self._provider,
                self._settings.observer_model,
                self._prompt.version,
                observer_messages(self._prompt, sent, cap),
                lambda content: validate_observations(parse_observer_reply(content, cap), texts),
                self._limits,
            )
            observations, run = outcome.value, outcome.run
        if observations is None:
            observations = observe_by_rules(turns, cap)
        return ObserverResult(
            conversation_id=conversation_id,
            observations=observations,
            provenance=run.provenance(
                content_hash(observer_input(conversation_id, turns)),
                content_hash(observations_output(observations)),
                started,
            ),
        )
