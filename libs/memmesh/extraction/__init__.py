"""Deterministic fact, command and correction extraction from single user turns."""

from .gates import apply_gates
from .model import (
    Candidate,
    Command,
    Correction,
    ExtractedFact,
    ExtractionResult,
    FactType,
    Rejection,
    RejectionReason,
)
from .rules import extract

__all__ = [
    "Candidate",
    "Command",
    "Correction",
    "ExtractedFact",
    "ExtractionResult",
    "FactType",
    "Rejection",
    "RejectionReason",
    "apply_gates",
    "extract",
]
