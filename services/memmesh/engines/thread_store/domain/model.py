"""The ThreadStore's domain types: plain values, times in integer microseconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import NamedTuple

from memmesh.observation import Observation, Provenance
from memmesh.policy.sensitivity import Exposure


class Role(IntEnum):
    """Who spoke (numbers equal the proto enum's)."""

    USER = 1
    ASSISTANT = 2


class Mode(IntEnum):
    """Session mode of a turn (numbers equal the proto enum's)."""

    SESSION_START = 1
    IN_SESSION = 2


class Tier(StrEnum):
    """Resume tiers of seed 001 §2.21A."""

    HOT = "HOT"
    WARM = "WARM"
    COLD = "COLD"


@dataclass(frozen=True)
class Turn:
    """One archived turn; only SAFE_TO_SPEAK turns feed summaries, digests, loops and the graph."""

    turn_id: str
    session_id: str
    role: Role
    text: str
    time_us: int
    exposure: Exposure = Exposure.SAFE_TO_SPEAK


@dataclass(frozen=True)
class UserActivity:
    """When the user last spoke to the assistant, and in which session."""

    last_interaction_us: int
    last_session_id: str


@dataclass(frozen=True)
class SessionRow:
    """What the store keeps per session besides its turns."""

    session_id: str
    start_us: int
    last_us: int
    turn_count: int
    rolling_summary: str
    closed: bool


@dataclass(frozen=True)
class Loop:
    """An open (or closed) commitment the user stated."""

    loop_id: str
    thread_id: str
    text: str
    stems: tuple[str, ...]
    salience: int
    open_us: int
    source_turn_id: str
    closed_by_turn_id: str = ""

    @property
    def is_open(self) -> bool:
        return not self.closed_by_turn_id


@dataclass(frozen=True)
class DigestBounds:
    """How much a digest keeps of each field."""

    key_entities: int = 8
    decisions: int = 5
    unresolved: int = 3
    evidence: int = 20
    summary_chars: int = 600


DEFAULT_BOUNDS = DigestBounds()
# REMEMBER_EVERYTHING (seed 001 §2.22): richer digests; the bundle's caps stay the same.
RICH_BOUNDS = DigestBounds(
    key_entities=12, decisions=10, unresolved=5, evidence=40, summary_chars=1000
)


def digest_bounds(remember_everything: bool) -> DigestBounds:
    return RICH_BOUNDS if remember_everything else DEFAULT_BOUNDS


@dataclass(frozen=True)
class Digest:
    """A thread digest (seed 001 §2.18): summary fields and turn ids, never transcript."""

    thread_id: str
    title: str
    summary: str
    key_entities: tuple[str, ...]
    unresolved_questions: tuple[str, ...]
    next_step: str
    evidence_turn_ids: tuple[str, ...]
    update_us: int
    pinned: bool = False
    use_count: int = 0
    last_use_us: int = 0
    has_open_loops: bool = False
    # Choices the user settled, newest first (seed 001 §2.18 last_decisions).
    last_decisions: tuple[str, ...] = ()
    # The sessions a topic thread spans (a session's own digest leaves it empty).
    session_ids: tuple[str, ...] = ()
    # "Where we left off" the Reflector wrote for a topic thread (empty: built from the
    # fields), and how its summary was made (None: the sessions' summaries merged).
    left_off: tuple[str, ...] = ()
    summary_provenance: Provenance | None = None
    # The sessions' own summary sentences when `summary` is the Reflector's: bullets built
    # from the fields take whole sentences from them, each of which a filter can hold back
    # alone (a reflection's sentences each carry the thread's title).
    said_summary: str = ""

    @property
    def unresolved(self) -> bool:
        return bool(self.unresolved_questions) or self.has_open_loops

    @property
    def last_used_us(self) -> int:
        """Recency for resume: the newest of its last turn and its last use."""
        return max(self.update_us, self.last_use_us)


@dataclass(frozen=True)
class Episode:
    """A digest of consecutive turns of one thread; its id is "<thread_id>#e<n>"."""

    episode_id: str
    thread_id: str
    title: str
    summary: str
    key_entities: tuple[str, ...]
    evidence_turn_ids: tuple[str, ...]
    update_us: int


class DigestHead(NamedTuple):
    """The fields of a digest that resume ordering reads, without its text and id lists
    (a tuple: resume reads one per digest of the user on every session start)."""

    thread_id: str
    update_us: int
    pinned: bool
    use_count: int
    last_use_us: int
    unresolved: bool

    @property
    def last_used_us(self) -> int:
        """Recency for resume: the newest of its last turn and its last use."""
        return max(self.update_us, self.last_use_us)


@dataclass(frozen=True)
class Edge:
    """An edge between two nodes with its weight summed over sessions: entity co-occurrence
    (mentioned_with), or a typed link read from its first node (depends_on, decided_in...)."""

    from_node_id: str
    to_node_id: str
    weight: int
    edge_type: str = "mentioned_with"
    # A link a digest stated (walked from either end); co-occurrence is stored both ways.
    linked: bool = False


@dataclass(frozen=True)
class GraphNode:
    node_id: str
    label: str


@dataclass(frozen=True)
class Appended:
    """Outcome of AppendTurn."""

    mode: Mode
    duplicate: bool
    loops_closed: tuple[Loop, ...] = ()
    loops_opened: tuple[Loop, ...] = ()
    # The exposure the turn is archived with.
    exposure: Exposure = Exposure.SAFE_TO_SPEAK


@dataclass(frozen=True)
class ClosedSession:
    """Outcome of CloseSession: the session's digest and its episode digests in thread order."""

    digest: Digest
    episodes: tuple[Episode, ...]


@dataclass(frozen=True)
class WorkingMemory:
    """What GetWorkingMemory returns."""

    turns: tuple[Turn, ...]
    rolling_summary: str
    active_loops: tuple[Loop, ...]
    last_interaction_us: int


@dataclass(frozen=True)
class Resumed:
    """What Resume returns."""

    episode_bridge: str
    candidates: tuple[Digest, ...]
    tier: str
    # "Where we left off" for the top candidate (1-3 bullets; empty without candidates).
    left_off: tuple[str, ...] = ()


@dataclass(frozen=True)
class TurnContext:
    """What GetTurnContext returns: mode, working memory, on a session start the resume and,
    when asked, the graph entities one edge away from the asked nodes."""

    mode: Mode
    memory: WorkingMemory
    resumed: Resumed | None = None
    # A session start whose resume part failed or ran out of its share of the deadline.
    resume_unavailable: bool = False
    entities: Expansion | None = None
    # The entities part failed or ran out of its share of the deadline.
    entities_unavailable: bool = False
    # Tone labels learned over sessions (emotional memory): tone only, never facts.
    tone: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expansion:
    nodes: tuple[GraphNode, ...] = ()
    edges: tuple[Edge, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class SessionObservations:
    """The Observer's observations of one session, one provenance per chunk observed, and
    the hash of the turns they were made from."""

    session_id: str
    source_hash: str
    observations: tuple[Observation, ...]
    provenance: tuple[Provenance, ...]


@dataclass(frozen=True)
class ThreadReflection:
    """The Reflector's reflection of one topic thread and the hash of what it was made from."""

    topic_id: str
    source_hash: str
    summary: str
    left_off: tuple[str, ...]
    provenance: Provenance
