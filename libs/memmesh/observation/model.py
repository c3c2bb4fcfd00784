"""The Observer's and the Reflector's values: plain, frozen, times in integer microseconds."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Speaker = Literal["user", "assistant"]

MAX_OBSERVATION_CHARS = 200
MAX_SUMMARY_CHARS = 600
MAX_LEFT_OFF = 3
MAX_LEFT_OFF_CHARS = 160


class ObservationKind(StrEnum):
    """What an observation records."""

    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    PLAN = "plan"
    QUESTION = "question"
    EVENT = "event"


class FallbackReason(StrEnum):
    """Why a batch was answered by the deterministic rules instead of the model (seed 004)."""

    TIMEOUT = "timeout"
    INVALID_OUTPUT = "invalid_output"
    DEGENERATE_OUTPUT = "degenerate_output"
    UNGROUNDED_OUTPUT = "ungrounded_output"
    PROVIDER_ERROR = "provider_error"
    BUDGET_EXCEEDED = "budget_exceeded"


@dataclass(frozen=True)
class ObservedTurn:
    """One turn of one conversation, as the Observer reads it."""

    conversation_id: str
    turn_id: str
    role: Speaker
    text: str
    time_us: int


@dataclass(frozen=True)
class Observation:
    """One thing worth remembering from a conversation, with the turns that say it."""

    text: str
    kind: ObservationKind
    turn_ids: tuple[str, ...]


@dataclass(frozen=True)
class Provenance:
    """How an output was made: enough to reproduce it and to count fallbacks."""

    provider: str
    model: str
    prompt_version: str
    input_hash: str
    output_hash: str
    latency_ms: int
    attempt_count: int
    fallback_used: bool
    fallback_reason: str = ""


@dataclass(frozen=True)
class ObserverResult:
    """The observations of one batch of one conversation."""

    conversation_id: str
    observations: tuple[Observation, ...]
    provenance: Provenance


@dataclass(frozen=True)
class ThreadState:
    """A thread's structured fields, as the ThreadStore keeps them."""

    thread_id: str
    title: str = ""
    key_entities: tuple[str, ...] = ()
    last_decisions: tuple[str, ...] = ()
    unresolved_questions: tuple[str, ...] = ()
    next_step: str = ""


@dataclass(frozen=True)
class ConversationObservations:
    """The observations one conversation of a thread produced."""

    thread_id: str
    conversation_id: str
    observations: tuple[Observation, ...]


@dataclass(frozen=True)
class Reflection:
    """A thread condensed: a short summary and 1-3 "where we left off" bullets."""

    thread_id: str
    summary: str
    left_off: tuple[str, ...]
    provenance: Provenance
