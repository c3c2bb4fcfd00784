"""Observational memory (seed 004): the Observer turns one conversation's turns into short,
third-person, evidence-cited observations; the Reflector condenses a thread's structured
fields and its observations into a summary and 1-3 "where we left off" bullets.

Plain typed Python, no gRPC and no storage: the ThreadStore, which owns conversation text,
calls it when a session closes. `ObservationPlanner` says when each role should run (token
thresholds) and cuts an over-budget conversation into ordered chunks of that conversation
only. In `semantic_with_fallback` mode an OpenAI-compatible model answers, after redaction,
under a strict JSON contract, grounding checks and capped retries with guidance; any failure
falls back, per batch, to deterministic rules (the only path in `deterministic_only` mode),
and every result carries its provenance. Settings: `MEMMESH_OBSERVATION_*`.
"""

from memmesh.observation.model import (
    ConversationObservations,
    FallbackReason,
    Observation,
    ObservationKind,
    ObservedTurn,
    ObserverResult,
    Provenance,
    Reflection,
    ThreadState,
)
from memmesh.observation.observer import Observer, planner_of
from memmesh.observation.planner import ObservationPlanner
from memmesh.observation.reflector import Reflector
from memmesh.observation.settings import ObservationSettings

__all__ = [
    "ConversationObservations",
    "FallbackReason",
    "Observation",
    "ObservationKind",
    "ObservationPlanner",
    "ObservationSettings",
    "ObservedTurn",
    "Observer",
    "ObserverResult",
    "Provenance",
    "Reflection",
    "Reflector",
    "ThreadState",
    "planner_of",
]
