"""The composer's domain types: what it gathers, what it decides, what it returns.

Enum-like fields hold the proto value name without its prefix ("USER_FACT",
"CONFIRMED", "VOICE"); times are integer microseconds since the epoch. What a turn
handles by the tens (atoms, turns, digests, loops, entities, pairs) is a named tuple:
immutable like the frozen dataclasses, and several times cheaper to build and copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

CONFIRMED = "CONFIRMED"
TENTATIVE = "TENTATIVE"
STALE = "STALE"
CONFLICT = "CONFLICT"

SESSION_START = "SESSION_START"
IN_SESSION = "IN_SESSION"
# A query whose mode the caller left to the ThreadStore to decide.
UNDECIDED = "UNSPECIFIED"


class MemoryAtom(NamedTuple):
    """An atom as the ranker returns it (the ranking signals travel with it)."""

    atom_id: str
    key: str
    text: str
    category: str = "PREFERENCE"
    type: str = "USER_FACT"
    provenance: str = "USER_STATED"
    confidence_bp: int = 9000
    exposure: str = "SAFE_TO_SPEAK"
    pinned: bool = False
    pull_only: bool = False
    critical_tokens: tuple[str, ...] = ()
    create_us: int = 0
    confirm_us: int = 0
    last_use_us: int = 0
    use_count: int = 0
    evidence_turn_ids: tuple[str, ...] = ()
    status: str = "ACTIVE"
    topics: tuple[str, ...] = ()
    # A standing constraint the ranker pushed because the request could touch it.
    standing: bool = False


class TurnRecord(NamedTuple):
    """A turn of working memory or an archive excerpt, with the exposure the archive holds for it."""

    turn_id: str
    session_id: str
    role: str
    text: str
    time_us: int
    exposure: str = "SAFE_TO_SPEAK"
    # Use, do not say (seed 001 §2.11.11): set by the guard's verdict on a voice channel.
    do_not_say: bool = False


class Digest(NamedTuple):
    """A session or thread digest the ranker found relevant."""

    digest_id: str
    title: str
    summary: str
    evidence_turn_ids: tuple[str, ...] = ()
    # The thread it belongs to: an episode digest names its session, rules on which reach it.
    thread_id: str = ""
    # When its last turn was said (microseconds), 0 when unknown.
    time_us: int = 0


class Loop(NamedTuple):
    """An open commitment of the user."""

    loop_id: str
    loop_type: str
    text: str
    salience: int
    open_us: int
    source_turn_id: str


@dataclass(frozen=True)
class UserFacts:
    """The Current State facts the composer needs (operational truth)."""

    display_name: str = ""
    primary_language: str = ""
    # "SPEAK", "TEXT" or "".
    contact_preference: str = ""
    timezone: str = ""
    auto_resume_disabled: bool = False
    recall_only_when_asked: bool = False
    # "Remember everything going forward" (seed 001 §2.22): longer resume windows.
    remember_everything: bool = False
    last_interaction_us: int = 0


@dataclass(frozen=True)
class Retrieved:
    """Ranker candidates: atoms in seed 001 §2.11.9 order, turns and digests by relevance,
    and the standing constraints the request could touch (flagged `standing`)."""

    atoms: tuple[MemoryAtom, ...] = ()
    turns: tuple[TurnRecord, ...] = ()
    digests: tuple[Digest, ...] = ()
    standing: tuple[MemoryAtom, ...] = ()


@dataclass(frozen=True)
class SessionMemory:
    """Working memory of the session: last turns (oldest first), rolling summary, open loops."""

    turns: tuple[TurnRecord, ...] = ()
    rolling_summary: str = ""
    loops: tuple[Loop, ...] = ()
    last_interaction_us: int = 0


@dataclass(frozen=True)
class ResumeCandidate:
    """What ThreadStore.Resume offers on a session start."""

    episode_bridge: str = ""
    # HOT, WARM or COLD (seed 001 §2.21A).
    tier: str = ""
    # The top candidate thread: its id, title and "where we left off" bullets.
    thread_id: str = ""
    title: str = ""
    left_off: tuple[str, ...] = ()
    # The top thread's recency: the newest of its last turn and its last use.
    last_used_us: int = 0


@dataclass(frozen=True)
class PendingWork:
    """The user's top pending work order (seed 001 §2.21B): DRAFT, CLARIFY or CONFIRM, one
    the user has not asked to forget. CurrentState holds it; the composer only offers it."""

    work_order_id: str
    title: str
    pending_question: str = ""
    update_us: int = 0


class Entity(NamedTuple):
    """A graph entity one co-occurrence edge away from an entity the turn names."""

    node_id: str
    label: str
    related_node_id: str
    related_label: str
    weight: int = 1


class CorrectionPair(NamedTuple):
    """What speech recognition heard and what the user meant."""

    heard: str
    meant: str


@dataclass(frozen=True)
class SpeechHints:
    """What the AtomExtractor lends the Hint Bundle: heard -> meant pairs (corrections, then
    the learning capsule's and the company pack's) and learned vocabulary."""

    pairs: tuple[CorrectionPair, ...] = ()
    vocabulary: tuple[str, ...] = ()


@dataclass(frozen=True)
class ComposeQuery:
    """One Compose request in domain terms."""

    tenant_id: str
    user_id: str
    session_id: str
    now_us: int
    mode: str
    query: str
    channel: str
    unanswered_question_ids: frozenset[str] = frozenset()
    user_review_requested: bool = False
    device_restored: bool = False
    # A thread the user asked to resume: its bullets surface whatever the tier or mode.
    resume_thread_id: str = ""


@dataclass(frozen=True)
class SessionContext:
    """The ThreadStore's part of a turn in one answer: the mode, working memory, on a
    session start the resume candidate and the graph entities next to the asked nodes
    (each None when that best-effort part failed)."""

    mode: str
    session: SessionMemory
    resume: ResumeCandidate | None = None
    entities: tuple[Entity, ...] | None = ()
    # Tone labels learned over sessions (emotional memory): tone only, never facts.
    tone: tuple[str, ...] = ()


@dataclass(frozen=True)
class Gathered:
    """Everything the dependencies returned for one turn (Tier-2 parts may be None)."""

    facts: UserFacts
    retrieved: Retrieved
    session: SessionMemory
    resume: ResumeCandidate | None = None
    corrections: tuple[CorrectionPair, ...] | None = None
    entities: tuple[Entity, ...] = ()
    # The learning capsule's and company pack's terms, in their owner's priority order.
    learned_vocabulary: tuple[str, ...] = ()
    # Tone labels learned over sessions (emotional memory): they reach the tone guidance
    # only, never a part of the bundle.
    learned_tone: tuple[str, ...] = ()
    # The top pending work order, on a session start.
    pending_work: PendingWork | None = None


@dataclass(frozen=True)
class GuardVerdict:
    """The ExposureGuard's answer: the ids that may pass, those of them to use but not
    say, and the DO_NOT_MENTION hit count."""

    allowed_item_ids: frozenset[str]
    do_not_mention_hits: int = 0
    do_not_say_item_ids: frozenset[str] = frozenset()


class TaggedAtom(NamedTuple):
    """An atom in the bundle with its §2.11.10 tag and whether it may be said (§2.11.11)."""

    atom: MemoryAtom
    tag: str
    do_not_say: bool = False


@dataclass(frozen=True)
class Question:
    """The one clarification question a bundle may carry."""

    question_id: str
    atom_id: str
    key: str
    text: str
    reason_code: str


@dataclass(frozen=True)
class PushMemory:
    """The tiny always-loaded set."""

    display_name: str = ""
    primary_language: str = ""
    # "speak", "text" or "".
    contact_preference: str = ""
    timezone: str = ""
    active_project_ids: tuple[str, ...] = ()
    do_not_repeat_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bundle:
    """The Context Bundle in domain terms."""

    now_us: int
    mode: str
    push: PushMemory = field(default_factory=PushMemory)
    last_interaction_us: int = 0
    working_memory: tuple[TurnRecord, ...] = ()
    rolling_summary: str = ""
    loops: tuple[Loop, ...] = ()
    atoms: tuple[TaggedAtom, ...] = ()
    excerpts: tuple[TurnRecord, ...] = ()
    digests: tuple[Digest, ...] = ()
    episode_bridge: str = ""
    question: Question | None = None
    entities: tuple[Entity, ...] = ()


@dataclass(frozen=True)
class Hints:
    """The Hint Bundle for speech recognition."""

    language: str = ""
    vocabulary: tuple[str, ...] = ()
    corrections: tuple[CorrectionPair, ...] = ()


@dataclass(frozen=True)
class Counters:
    """Seed 001 §2.12 measurement counters of one bundle."""

    context_bundle_bytes: int = 0
    atoms_selected_count: int = 0
    excerpts_selected_count: int = 0
    confirmed_count: int = 0
    tentative_count: int = 0
    conflict_trigger_count: int = 0
    clarification_due_to_memory_count: int = 0
    do_not_mention_hits_count: int = 0


@dataclass(frozen=True)
class Composed:
    """The result of one composition."""

    bundle: Bundle
    hints: Hints
    tone_labels: tuple[str, ...]
    counters: Counters
    learned_tone: tuple[str, ...] = ()
    degraded_parts: tuple[str, ...] = ()
    # Do-not-repeat keys left out by the 128-key cap (logged with a reason code).
    do_not_repeat_evicted: int = 0
    # The flags the guard applied, so a final gate downstream applies the same ones.
    user_asked: bool = False
    speak_text_allowed: bool = False
    # The work order the bundle offers to resume (its bullets or its question), or "".
    offered_work_order_id: str = ""
