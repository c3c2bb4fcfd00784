"""Domain types of the capsule: turns in, atoms, changes, learning artifacts and queued effects."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum

from memmesh.extraction.model import FactType
from memmesh.extraction.patterns import ObservationWrite
from memmesh.policy.sensitivity import Exposure  # how far an atom may travel (seed 001 §2.11.11)

CONFIDENCE_MAX_BP = 10_000


@dataclass(frozen=True)
class TurnInput:
    """The parts of a turn extraction needs; role is "user" or "assistant"."""

    turn_id: str
    session_id: str
    role: str
    text: str
    # The speaker is verified as the user: only then is the turn's correction pair kept
    # (the learning capsule is voice-locked); facts and commands apply either way.
    speaker_verified: bool = True


class AtomStatus(StrEnum):
    """Lifecycle of an atom (STALE is computed from `now`, never stored: see freshness.py)."""

    ACTIVE = "ACTIVE"
    CONFLICT = "CONFLICT"
    SUPERSEDED = "SUPERSEDED"


class Provenance(StrEnum):
    """Where a fact came from, in rising priority (seed 001 §2.11.9)."""

    INFERRED = "INFERRED"
    TOOL_DERIVED = "TOOL_DERIVED"
    USER_STATED = "USER_STATED"
    VERIFIED = "VERIFIED"


class ChangeKind(StrEnum):
    """What happened to an atom; each kind is one ledger event type."""

    CREATED = "CREATED"
    CONFIRMED = "CONFIRMED"
    SUPERSEDED = "SUPERSEDED"
    CONFLICT = "CONFLICT"
    CORRECTED = "CORRECTED"
    FORGOTTEN = "FORGOTTEN"
    MARKED = "MARKED"
    DROPPED = "DROPPED"


@dataclass(frozen=True)
class AtomRecord:
    """Every field of common.v1.Atom; times are integer microseconds, 0 meaning never."""

    atom_id: str
    key: str
    text: str
    category: str
    type: FactType
    provenance: Provenance
    confidence_bp: int
    exposure: Exposure
    pinned: bool
    pull_only: bool
    critical_tokens: tuple[str, ...]
    create_time_us: int
    confirm_time_us: int
    last_use_time_us: int
    use_count: int
    version: int
    evidence_turn_ids: tuple[str, ...]
    status: AtomStatus
    conflict_atom_id: str
    topics: tuple[str, ...]


@dataclass(frozen=True)
class AtomChange:
    """One reason-coded change; `atom` is the state after it (ids only for a forget)."""

    kind: ChangeKind
    atom: AtomRecord
    reason_code: str
    confidence_delta_bp: int


@dataclass(frozen=True)
class CorrectionPair:
    """A heard -> meant pair kept as a per-user learning artifact (seed 001 §2.4.4)."""

    heard: str
    meant: str
    turn_id: str
    record_time_us: int


@dataclass(frozen=True)
class RejectionEntry:
    """One seed 002 rejection log entry."""

    candidate_text: str
    type: FactType
    confidence_bp: int
    reason_code: str
    threshold_bp: int
    details: str
    turn_id: str
    reject_time_us: int


@dataclass(frozen=True)
class ProvenanceEntry:
    """Provenance of one semantic artifact (seed 004)."""

    turn_id: str
    provider: str
    model: str
    prompt_version: str
    input_hash: str
    output_hash: str
    latency_ms: int
    attempts: int
    fallback_used: bool
    fallback_reason: str
    record_time_us: int


class EffectKind(StrEnum):
    """Work on another engine that follows a capsule change; queued with it, retried until done."""

    LEDGER_APPEND = "LEDGER_APPEND"
    INDEX_UPSERT = "INDEX_UPSERT"
    INDEX_REMOVE = "INDEX_REMOVE"
    GUARD_RULE = "GUARD_RULE"
    STATE_APPLY = "STATE_APPLY"
    THREAD_FORGET = "THREAD_FORGET"
    THREAD_RESTRICT = "THREAD_RESTRICT"
    # A forget's reach (domain/erasure.py): archive, index, devices and the ledger key.
    THREAD_REDACT = "THREAD_REDACT"
    THREAD_FORGET_USER = "THREAD_FORGET_USER"
    # How the user likes to be spoken to (the ThreadStore's tone signals), nothing else.
    THREAD_FORGET_TONE = "THREAD_FORGET_TONE"
    # The retention mode as the ThreadStore keeps it (richer digests, longer windows).
    THREAD_RETENTION = "THREAD_RETENTION"
    INDEX_FORGET_USER = "INDEX_FORGET_USER"
    DEVICE_FORGET = "DEVICE_FORGET"
    DEVICE_FORGET_USER = "DEVICE_FORGET_USER"
    LEDGER_SHRED = "LEDGER_SHRED"
    GUARD_FORGET_USER = "GUARD_FORGET_USER"


@dataclass(frozen=True)
class Effect:
    """A queued effect; the payload holds ids and codes only, never fact text (a redaction
    carries the terms to cut, and is gone from the queue once delivered)."""

    kind: EffectKind
    payload: dict[str, object]


@dataclass(frozen=True)
class ErasureMark:
    """A forget remembered without its content: kind "user" (subject empty), "session"
    (a session id), "turn" (a turn id), "words" (keyed hashes of the forget's words,
    comma-joined) or "dns" (keyed hashes of a do-not-store subject's words), and when it
    happened. A turn extracted late sees it; every later turn sees a "dns" mark."""

    kind: str
    subject: str
    erase_time_us: int


@dataclass(frozen=True)
class LocalErasure:
    """What a forget removes from the extractor's own tables in its transaction: the
    log entries of these turns or holding these terms (all of them for `everything`),
    the user's queued effects carrying the terms, and the marks that stop a late
    extraction."""

    everything: bool = False
    turn_ids: frozenset[str] = frozenset()
    terms: tuple[str, ...] = ()
    marks: tuple[ErasureMark, ...] = ()


@dataclass(frozen=True)
class LateErasures:
    """The marks that concern one turn being extracted: its own, its session's, the
    user's, and the word marks, each with its time."""

    turn_erased: bool = False
    session_erased_us: int = 0
    user_erased_us: int = 0
    word_sets: tuple[tuple[frozenset[str], int], ...] = ()
    # Keyed hashes of the subjects of the user's do-not-store commands (kind "dns"): a turn
    # that speaks of one keeps nothing and loses the sentences that do.
    blocked_sets: tuple[frozenset[str], ...] = ()

    def covers_turn(self, now_us: int) -> bool:
        """True when the whole turn (said at `now_us`) was forgotten before it was extracted."""
        return self.turn_erased or self.session_erased_us >= now_us or self.user_erased_us >= now_us


@dataclass
class CapsuleCommit:
    """Everything one request changes, written in one transaction with its marker."""

    marker: str
    upserts: list[tuple[AtomRecord, int]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    corrections: list[CorrectionPair] = field(default_factory=list)
    rejections: list[RejectionEntry] = field(default_factory=list)
    provenance: list[ProvenanceEntry] = field(default_factory=list)
    session_refs: tuple[str, tuple[str, ...]] | None = None
    effects: list[Effect] = field(default_factory=list)
    # The turn this commit processed and its session (so a forgotten conversation's atoms
    # are known by their evidence).
    turn_session: tuple[str, str] | None = None
    # The turn said (no command) just processed and its session: what a later "forget
    # that" in the session points at.
    last_said: tuple[str, str] | None = None
    erasure: LocalErasure | None = None
    # What the request does to the user's behaviour observations (the pattern learner's).
    observations: ObservationWrite | None = None


def digest(*parts: str) -> str:
    """SHA-256 hex of parts joined by a separator that cannot occur in them."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def normalized_value(text: str) -> str:
    """The comparable value of a fact: lowercase words only."""
    return " ".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def atom_id_of(tenant_id: str, user_id: str, key: str, text: str) -> str:
    """Deterministic atom id: the same scope, key and value always give the same id."""
    return "atm_" + digest(tenant_id, user_id, key, normalized_value(text))[:32]
