"""The ThreadStore's ports: its store, the session buffer and the feed of the retrieval index."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.thread_store.domain.graph import Link
from memmesh.engines.thread_store.domain.model import (
    Digest,
    DigestHead,
    Edge,
    Episode,
    GraphNode,
    Loop,
    Mode,
    SessionObservations,
    SessionRow,
    ThreadReflection,
    Turn,
    UserActivity,
)
from memmesh.engines.thread_store.domain.tone import HeardSignal, ToneSignal
from memmesh.engines.thread_store.domain.topics import TopicRow
from memmesh.outbox import Effect
from memmesh.policy.sensitivity import Exposure


@dataclass(frozen=True)
class IndexChange:
    """What the retrieval index must do after a write: remove copies, then index turns (with
    their archived exposure, never INTERNAL_ONLY) and digests."""

    removed: tuple[str, ...] = ()
    turns: tuple[Turn, ...] = ()
    digests: tuple[Digest | Episode, ...] = ()
    # The removals erase forgotten content: the index also reclaims the deleted bytes.
    erase: bool = False
    # Remove every document of the user (forgetting the user), before anything else.
    forget_user: bool = False


class UserTx(Protocol):
    """One user's data inside one transaction (writes are serialised per user)."""

    async def data_version(self) -> int:
        """The version of the user's rows (0 while the user has none: before any write and
        once forgotten): every write transaction of the user replaces it with a new random
        number, so the same version read twice means no write committed in between."""
        ...

    async def turn_mode(self, turn_id: str) -> Mode | None:
        """The mode a turn was archived with, or None when the turn id is new."""
        ...

    async def user_activity(self) -> UserActivity | None: ...

    async def save_activity(self, activity: UserActivity) -> None: ...

    async def session(self, session_id: str) -> SessionRow | None: ...

    async def save_session(self, row: SessionRow) -> None: ...

    async def recent_sessions(self, limit: int) -> list[SessionRow]:
        """Sessions by newest last turn first, then session id."""
        ...

    async def insert_turn(self, turn: Turn, mode: Mode) -> None: ...

    async def session_turns(
        self,
        session_id: str,
        limit: int,
        user_only: bool = False,
        max_exposure: Exposure = Exposure.INTERNAL_ONLY,
    ) -> list[Turn]:
        """The newest `limit` turns of a session no stricter than max_exposure, in (time, id) order."""
        ...

    async def turns_of(self, turn_ids: Sequence[str]) -> list[Turn]:
        """The archived turns among these ids, in (time, id) order."""
        ...

    async def restrict_turns(self, turn_ids: Sequence[str], exposure: Exposure) -> int:
        """Raise the turns' exposure to this level where it is lower; the number raised."""
        ...

    async def delete_loops_from(self, turn_ids: Sequence[str]) -> None:
        """Delete the loops these turns opened."""
        ...

    async def add_tone_signals(
        self, turn: Turn, signals: Sequence[tuple[ToneSignal, int]], keep: int
    ) -> None:
        """Store the tone signals a turn gave (by its id, never its words), keeping the
        user's newest `keep`."""
        ...

    async def tone_signals(self, limit: int) -> list[HeardSignal]:
        """The user's newest tone signals."""
        ...

    async def drop_tone_signals(self, turn_ids: Sequence[str] | None = None) -> int:
        """Delete the tone signals of these turns (all of the user's with None); how many."""
        ...

    async def clear_graph(self, thread_id: str) -> None:
        """Delete the thread's graph nodes and edges."""
        ...

    async def open_loops(self, limit: int) -> list[Loop]:
        """Open loops of the user, newest first."""
        ...

    async def thread_loops(self, thread_id: str) -> list[Loop]: ...

    async def save_loops(self, loops: Sequence[Loop]) -> None:
        """Insert or replace loops by id."""
        ...

    async def add_graph(
        self, thread_id: str, nodes: Sequence[GraphNode], pairs: Sequence[tuple[str, str]]
    ) -> None:
        """Record the nodes and add one to the weight of each directed pair, within the thread."""
        ...

    async def add_links(
        self, thread_id: str, nodes: Sequence[GraphNode], links: Sequence[Link]
    ) -> None:
        """Record the nodes and the typed links as the session `thread_id` states them (a
        node or link it already stated is kept once)."""
        ...

    async def neighbours(self, node_ids: Sequence[str], typed: bool = True) -> list[Edge]:
        """Co-occurrence edges out of the nodes, weights summed over sessions, and with
        `typed` the typed links at either end of them, counted once per session."""
        ...

    async def node_labels(self, node_ids: Sequence[str]) -> dict[str, str]: ...

    async def digest(self, thread_id: str) -> Digest | None: ...

    async def digests(self) -> list[Digest]:
        """Every digest of the user, by update time then thread id."""
        ...

    async def digest_heads(self) -> list[DigestHead]:
        """The ordering fields of every digest of the user, by update time then thread id."""
        ...

    async def digests_of(self, thread_ids: Sequence[str]) -> dict[str, Digest]:
        """The digests with these thread ids, by thread id (unknown ids are left out)."""
        ...

    async def save_digest(self, digest: Digest) -> None:
        """Insert or update the content; pin and use fields of a stored digest are kept."""
        ...

    async def topic_members(self) -> dict[str, str]:
        """The topic thread of each digested session of the user, by session id."""
        ...

    async def topic_rows(self) -> dict[str, TopicRow]:
        """The pin and uses of each topic thread of the user, by thread id."""
        ...

    async def join_topic(self, session_id: str, topic_id: str) -> None:
        """The session belongs to the thread from now on (the thread is created unpinned
        and unused when new)."""
        ...

    async def mark_topic(self, topic_id: str, pinned: bool | None, used_at_us: int | None) -> None:
        """Pin/unpin the thread and/or count a use at that time (its last use never moves
        backwards)."""
        ...

    async def replace_episodes(self, thread_id: str, episodes: Sequence[Episode]) -> None:
        """The thread's episode digests become exactly these."""
        ...

    async def thread_episodes(self, thread_id: str) -> list[Episode]:
        """The thread's episode digests in thread order."""
        ...

    async def save_observations(self, observed: SessionObservations) -> None:
        """Store the session's observations in place of any before."""
        ...

    async def observations_of(self, session_ids: Sequence[str]) -> dict[str, SessionObservations]:
        """The stored observations of these sessions, by session id."""
        ...

    async def save_reflection(self, reflection: ThreadReflection) -> None:
        """Store the thread's reflection in place of any before."""
        ...

    async def reflections_of(self, topic_ids: Sequence[str]) -> dict[str, ThreadReflection]:
        """The stored reflections of these threads, by thread id."""
        ...

    async def drop_observed(self, session_id: str) -> None:
        """Delete the session's observations and the reflection of its thread (both were
        made from what it said)."""
        ...

    async def remembers_everything(self) -> bool:
        """True when the user's retention mode is REMEMBER_EVERYTHING."""
        ...

    async def set_remembers_everything(self, remember_everything: bool) -> None: ...

    async def expire_thread(self, topic_id: str, session_ids: Sequence[str]) -> None:
        """A thread past its retention goes: its sessions' digests, episodes, observations,
        graph links and membership, its reflection, pin and uses (the archived turns stay)."""
        ...

    async def forget_thread(self, thread_id: str) -> bool:
        """Delete the session thread's digest, episodes, loops, graph rows, session, turns,
        observations and topic membership, and its topic thread's reflection (a topic thread
        left without sessions goes); True if anything was there."""
        ...

    async def set_turn_texts(self, texts: Sequence[tuple[str, str]]) -> None:
        """Replace the text of archived turns: (turn id, new text) pairs."""
        ...

    async def forgotten_session(self, session_id: str) -> list[str]:
        """The turn ids recorded when the session was forgotten (empty when it never was)."""
        ...

    async def record_forgotten_session(self, session_id: str, turn_ids: Sequence[str]) -> None:
        """Record the ids (never the text) of the turns a forgotten session had."""
        ...

    async def session_ids(self) -> list[str]:
        """Every session id of the user, sorted."""
        ...

    async def forget_user(self) -> int:
        """Delete every row of the user (turns, sessions, activity, loops, digests, episodes,
        graph, forgotten-session records); the number of turns deleted."""
        ...

    async def scrub_queued_index(self, turn_ids: Sequence[str], thread_ids: Sequence[str]) -> int:
        """Take the documents of these turns and of these threads' digests and episodes out of
        the user's queued and dead index effects (their payloads carry the text); an effect
        left with nothing to send goes. The number of effects changed."""
        ...

    async def queue_index(self, change: IndexChange, key: str = "") -> list[Effect]:
        """Queue the change for the retrieval index in this transaction (it commits with the
        write or not at all); `key` names a change that happens once. The effects queued."""
        ...


class ThreadStore(Protocol):
    """Sessions, archive, loops, digests and graph, keyed by (tenant, user)."""

    def write(self, tenant_id: str, user_id: str) -> AbstractAsyncContextManager[UserTx]:
        """A transaction serialised with every other writer of the same user; it raises the
        user's data version."""
        ...

    def read(self, tenant_id: str, user_id: str) -> AbstractAsyncContextManager[UserTx]:
        """Reads without a lock (each statement sees committed data)."""
        ...

    async def reclaim_erased(self) -> bool:
        """After an erasure, make deleted bytes unreadable where the store can (best effort)."""
        ...

    async def close(self) -> None: ...


class TurnBuffer(Protocol):
    """Recent turns of a session, kept outside the archive for the per-turn path."""

    async def epoch(self, tenant_id: str, user_id: str) -> int:
        """The user's erasure epoch: every drop raises it (0 before any)."""
        ...

    async def replace(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        version: int,
        turns: Sequence[Turn],
        epoch: int | None = None,
    ) -> None:
        """Store the session's newest turns (oldest first) unless a newer version is stored
        or, given the epoch read before the turns were read, a drop came since (the turns
        may then hold what an erasure removed)."""
        ...

    async def recent(self, tenant_id: str, user_id: str, session_id: str) -> list[Turn] | None:
        """The buffered turns, oldest first; None when nothing is buffered."""
        ...

    async def drop(self, tenant_id: str, user_id: str, session_id: str) -> None:
        """Raise the user's erasure epoch, then drop the session's turns."""
        ...

    async def drop_user(self, tenant_id: str, user_id: str) -> None:
        """Raise the user's erasure epoch, then drop every buffered session of the user."""
        ...

    async def close(self) -> None: ...


class IndexFeed(Protocol):
    """Delivery of what a write queued for the retrieval index."""

    async def first_attempt(
        self,
        tenant_id: str,
        user_id: str,
        effects: Sequence[Effect],
        timeout_s: float | None = None,
    ) -> None:
        """Try to deliver now, briefly (within `timeout_s` when given); whatever fails stays
        queued and is delivered later."""
        ...

    async def settle(self, tenant_id: str, user_id: str, timeout_s: float | None = None) -> int:
        """Deliver what the user has queued for the index now (within `timeout_s` when given,
        else a first attempt's time); how many of the user's index changes are still
        queued afterwards."""
        ...
