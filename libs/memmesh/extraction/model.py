"""Domain types of the deterministic extractor (seed 000 output contract, seed 002 typing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

CATEGORIES = ("preference", "relationship", "identity", "constraint")
BASIS_POINTS_MAX = 10_000


class FactType(StrEnum):
    """Seed 002 memory types; each has its own confidence gate."""

    USER_FACT = "USER_FACT"
    USER_PATTERN = "USER_PATTERN"
    SHARED_NARRATIVE = "SHARED_NARRATIVE"


class Command(StrEnum):
    """User memory-control commands (seed 001 §2.11.11, §2.21-2.22, Q13)."""

    RECALL_SUMMARY = "RECALL_SUMMARY"
    FORGET = "FORGET"
    DO_NOT_STORE = "DO_NOT_STORE"
    PULL_ONLY = "PULL_ONLY"
    RECALL_ONLY_IF_ASKED = "RECALL_ONLY_IF_ASKED"
    DO_NOT_MENTION = "DO_NOT_MENTION"
    REMEMBER_EVERYTHING = "REMEMBER_EVERYTHING"
    RESUME_THREAD = "RESUME_THREAD"
    FORGET_THREAD = "FORGET_THREAD"
    CORRECTION = "CORRECTION"
    FORGET_EVERYTHING = "FORGET_EVERYTHING"
    FORGET_TONE = "FORGET_TONE"


class RejectionReason(StrEnum):
    """Reason codes of the seed 002 rejection log."""

    CONFIDENCE_BELOW_THRESHOLD = "confidence_below_threshold"
    NOT_GROUNDED_IN_SOURCE = "not_grounded_in_source"
    TYPE_RULE_VIOLATION = "type_rule_violation"
    SEMANTICALLY_INVALID = "semantically_invalid"
    PATTERN_PROPOSAL = "pattern_proposal"


@dataclass(frozen=True)
class Candidate:
    """A proposed fact before the gates; `violations` name exclusion markers found by rules."""

    text: str
    category: str
    type: FactType
    confidence_bp: int
    key: str
    critical_tokens: tuple[str, ...] = ()
    evidence_span: str = ""
    violations: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExtractedFact:
    """A durable fact that passed every gate."""

    text: str
    category: str
    type: FactType
    confidence_bp: int
    key: str
    critical_tokens: tuple[str, ...]
    evidence_span: str


@dataclass(frozen=True)
class Correction:
    """A correction pair: what the system heard and what the user meant (Q13)."""

    heard: str
    meant: str


@dataclass(frozen=True)
class Rejection:
    """One entry of the rejection log."""

    candidate_text: str
    type: FactType
    confidence_bp: int
    reason_code: RejectionReason
    threshold_bp: int | None
    details: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ExtractionResult:
    """Everything extracted from one turn; `relevant` is true exactly when facts exist."""

    relevant: bool
    facts: tuple[ExtractedFact, ...] = ()
    command: Command | None = None
    command_target: str | None = None
    correction: Correction | None = None
    rejections: tuple[Rejection, ...] = field(default=())
