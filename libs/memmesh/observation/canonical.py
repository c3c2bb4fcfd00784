"""Canonical forms of the Observer's and the Reflector's inputs and outputs, their hashes,
and the invariants every batch is checked against before anything runs (seed 004: T1 never
mixes conversations, T2 never mixes threads)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from memmesh.errors import FieldViolation, InvalidInput
from memmesh.observation.model import (
    ConversationObservations,
    Observation,
    ObservedTurn,
    ThreadState,
)


def canonical_json(payload: Mapping[str, Any] | Sequence[Any]) -> str:
    """One serialisation per value: sorted keys, no spaces, Unicode kept."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(payload: Mapping[str, Any] | Sequence[Any]) -> str:
    """SHA-256 hex of the canonical serialisation."""
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def estimated_tokens(text: str) -> int:
    """A conservative token estimate: 4 characters a token, rounded up."""
    return -(-len(text) // 4)


def turn_order(turn: ObservedTurn) -> tuple[int, str]:
    """Turns are read in time order, ties broken by id, whatever order they were given in."""
    return (turn.time_us, turn.turn_id)


def conversation_turns(conversation_id: str, turns: Sequence[ObservedTurn]) -> list[ObservedTurn]:
    """The turns in reading order; raise InvalidInput when one belongs to another
    conversation, repeats an id, or has an unknown role."""
    violations = [
        FieldViolation(f"turns[{i}].conversation_id", f"not {conversation_id!r}")
        for i, turn in enumerate(turns)
        if turn.conversation_id != conversation_id
    ]
    violations += [
        FieldViolation(f"turns[{i}].role", "must be user or assistant")
        for i, turn in enumerate(turns)
        if turn.role not in ("user", "assistant")
    ]
    seen: set[str] = set()
    for i, turn in enumerate(turns):
        if not turn.turn_id or turn.turn_id in seen:
            violations.append(FieldViolation(f"turns[{i}].turn_id", "empty or repeated"))
        seen.add(turn.turn_id)
    if not conversation_id:
        violations.append(FieldViolation("conversation_id", "required"))
    if violations:
        raise InvalidInput(violations)
    return sorted(turns, key=turn_order)


def thread_batches(
    thread: ThreadState, batches: Sequence[ConversationObservations]
) -> list[ConversationObservations]:
    """The batches in conversation order; raise InvalidInput when one belongs to another thread."""
    violations = [
        FieldViolation(f"batches[{i}].thread_id", f"not {thread.thread_id!r}")
        for i, batch in enumerate(batches)
        if batch.thread_id != thread.thread_id
    ]
    if not thread.thread_id:
        violations.append(FieldViolation("thread.thread_id", "required"))
    if violations:
        raise InvalidInput(violations)
    # A stable sort: a conversation's observations keep their order.
    return sorted(batches, key=lambda batch: batch.conversation_id)


def observer_input(conversation_id: str, turns: Sequence[ObservedTurn]) -> dict[str, Any]:
    """The Observer's input as plain data, turns in reading order."""
    return {
        "conversation_id": conversation_id,
        "turns": [
            {"turn_id": t.turn_id, "role": t.role, "text": t.text, "time_us": t.time_us}
            for t in sorted(turns, key=turn_order)
        ],
    }


def reflector_input(
    thread: ThreadState, batches: Sequence[ConversationObservations]
) -> dict[str, Any]:
    """The Reflector's input as plain data, batches in conversation order."""
    return {
        "thread": asdict(thread),
        "conversations": [
            {
                "conversation_id": batch.conversation_id,
                "observations": observations_output(batch.observations),
            }
            for batch in sorted(batches, key=lambda batch: batch.conversation_id)
        ],
    }


def observations_output(observations: Sequence[Observation]) -> list[dict[str, Any]]:
    """Observations as plain data, in their order."""
    return [
        {"text": o.text, "kind": o.kind.value, "turn_ids": list(o.turn_ids)} for o in observations
    ]


def reflection_output(summary: str, left_off: Sequence[str]) -> dict[str, Any]:
    """A reflection's content as plain data."""
    return {"summary": summary, "left_off": list(left_off)}
