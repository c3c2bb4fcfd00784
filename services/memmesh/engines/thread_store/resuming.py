"""A session start's resume (seed 001 §2.21): the episode bridge, candidate threads in
resume order and "where we left off" for the top one.

Only the ranking and the tier depend on the time; everything else a resume reads and builds
(the previous session, an unclosed previous session's digest and the thread it would join,
the threads' heads, the candidate threads merged and reflected) is the same for the same
rows. That part is kept in the process per user, under the user's data version: every write
transaction of the user gives it a new random number in the store (an erasure too; a
forgotten user has none, as before any write), and it is kept only when
the version read after the resume's last read is the one read before its first (no write
committed in between). A kept part is therefore what the rows give now, on every replica
that shares the store, and is never served once anything of the user changed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memmesh.engines.thread_store.domain.model import (
    Digest,
    DigestBounds,
    DigestHead,
    Resumed,
    SessionRow,
    digest_bounds,
)
from memmesh.engines.thread_store.domain.resume import left_off, resume_candidates
from memmesh.engines.thread_store.domain.summary import DIGEST_WINDOW_TURNS, build_digest
from memmesh.engines.thread_store.domain.topics import (
    MERGE_SESSIONS,
    TopicRow,
    head_of,
    joined_topic,
    merge_heads,
    newest_sessions,
    threads_of,
)
from memmesh.engines.thread_store.ports import UserTx
from memmesh.engines.thread_store.threads import joinable_threads, with_reflections
from memmesh.policy.sensitivity import Exposure

# Resume looks at the most recent sessions for the episode bridge.
BRIDGE_SESSIONS = 2
# Users whose resume parts a process keeps by default (least recently resumed go first).
DEFAULT_KEPT_USERS = 256
# Threads kept per user and previous session: a resume names at most 5, and the time
# moves the ranking slowly, so a few dozen cover many session starts.
KEPT_THREADS = 64


@dataclass
class _Basis:
    """What the resume of a session start after one previous session builds from the rows
    at one data version, whatever the time."""

    bridge: str
    # Per session, the unclosed previous session's as its digest built now would say.
    session_heads: list[DigestHead]
    # Per thread, in merge_heads order.
    heads: list[DigestHead]
    members: Mapping[str, str]
    rows: Mapping[str, TopicRow]
    bounds: DigestBounds
    # The unclosed previous session's digest, built and not stored.
    extra: dict[str, Digest]
    # Candidate threads read so far, merged and reflected, and their "where we left off".
    threads: dict[str, Digest] = field(default_factory=dict)
    left_offs: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class _Kept:
    """A user's resume parts at one data version."""

    version: int
    sessions: list[SessionRow]
    # By the previous session's id ('' when there is none).
    bases: dict[str, _Basis] = field(default_factory=dict)


class Resumes:
    """Session-start resumes, with what each user's rows gave kept for the next one (at most
    `kept_users` users; 0 keeps nothing)."""

    def __init__(self, kept_users: int = DEFAULT_KEPT_USERS) -> None:
        self._kept_users = kept_users
        self._kept: OrderedDict[tuple[str, str], _Kept] = OrderedDict()

    async def resume(
        self, tx: UserTx, who: tuple[str, str], session_id: str, now_us: int
    ) -> Resumed:
        """The resume of a session start at `now_us` from the user's rows, read through `tx`
        where nothing is kept for the user's current data version."""
        version = await tx.data_version()
        kept = self._kept.get(who)
        fresh = kept is None or kept.version != version
        if kept is None or fresh:
            if kept is not None:
                # Made from rows that have changed since: it goes, whatever this resume keeps.
                del self._kept[who]
            kept = _Kept(version, await tx.recent_sessions(BRIDGE_SESSIONS))
        else:
            self._kept.move_to_end(who)
        previous = next((s for s in kept.sessions if s.session_id != session_id), None)
        key = previous.session_id if previous else ""
        basis = kept.bases.get(key)
        new_basis = basis is None
        if basis is None:
            basis = await _basis(tx, previous)
        heads, tier = resume_candidates(basis.heads, session_id, now_us)
        missing = [head.thread_id for head in heads if head.thread_id not in basis.threads]
        read = await _threads(tx, basis, missing) if missing else {}
        if any(
            head.thread_id not in basis.threads and head.thread_id not in read for head in heads
        ):
            # A digest went between two reads (another process forgot it): read them all.
            return await _from_every_digest(tx, basis, session_id, now_us)
        candidates = tuple(basis.threads.get(h.thread_id) or read[h.thread_id] for h in heads)
        settled = not (fresh or new_basis or read) or await tx.data_version() == version
        if settled and self._kept_users > 0:
            # No write came between the first read and the last: the parts are the rows'.
            if len(basis.threads) + len(read) > KEPT_THREADS:
                basis.threads.clear()
                basis.left_offs.clear()
            basis.threads.update(read)
            kept.bases[key] = basis
            if fresh:
                self._keep(who, kept)
        if not candidates:
            return Resumed(basis.bridge, (), tier, ())
        top = candidates[0].thread_id
        bullets = basis.left_offs.get(top) if settled else None
        if bullets is None:
            bullets = left_off(candidates[0])
            if settled:
                basis.left_offs[top] = bullets
        return Resumed(basis.bridge, candidates, tier, bullets)

    def drop(self, who: tuple[str, str]) -> None:
        """Let go of what is kept for the user now (an erasure's words leave the process's
        memory with it; what is kept is never served after a write either way)."""
        self._kept.pop(who, None)

    def _keep(self, who: tuple[str, str], kept: _Kept) -> None:
        # Versions are not ordered: a resume that read an older one and finishes last leaves
        # its parts here, and the next resume, reading another version, reads the rows again.
        self._kept[who] = kept
        self._kept.move_to_end(who)
        while len(self._kept) > self._kept_users:
            self._kept.popitem(last=False)


async def open_digest(tx: UserTx, session: SessionRow, bounds: DigestBounds) -> Digest:
    """The digest a session still open would get on its close."""
    turns = await tx.session_turns(
        session.session_id, DIGEST_WINDOW_TURNS, max_exposure=Exposure.SAFE_TO_SPEAK
    )
    loops = await tx.thread_loops(session.session_id)
    return build_digest(session.session_id, turns, loops, session.last_us, bounds)


async def _basis(tx: UserTx, previous: SessionRow | None) -> _Basis:
    """The previous session, when the user has not closed it yet (its digest is built when
    the next session's first turn arrives), takes part with a digest built from its turns
    now (not stored), in the thread it would join on its close."""
    members, rows = await tx.topic_members(), await tx.topic_rows()
    session_heads = await tx.digest_heads()
    bounds = digest_bounds(await tx.remembers_everything())
    extra: dict[str, Digest] = {}
    if previous is not None and not previous.closed:
        built = await open_digest(tx, previous, bounds)
        extra[previous.session_id] = built
        session_heads = [h for h in session_heads if h.thread_id != previous.session_id]
        session_heads.append(head_of(built))
        if previous.session_id not in members:
            joinable = await joinable_threads(tx, members, rows, previous.session_id, session_heads)
            joined = joined_topic(built, joinable) or previous.session_id
            members = {**members, previous.session_id: joined}
    bridge = ""
    if previous is not None:
        bridge = previous.rolling_summary
        if not bridge:
            own = extra.get(previous.session_id) or (
                await tx.digests_of([previous.session_id])
            ).get(previous.session_id)
            bridge = own.summary if own else ""
    return _Basis(
        bridge,
        session_heads,
        merge_heads(session_heads, members, rows),
        members,
        rows,
        bounds,
        extra,
    )


async def _threads(tx: UserTx, basis: _Basis, topics: Sequence[str]) -> dict[str, Digest]:
    """The threads, each merged from its newest sessions and, unless one of them is the
    unclosed previous session, reflected; a thread whose digests went meanwhile is left out."""
    wanted = set(newest_sessions(basis.session_heads, basis.members, topics, MERGE_SESSIONS))
    digests = await tx.digests_of(sorted(wanted - set(basis.extra)))
    digests.update(basis.extra)
    chosen = set(topics)
    threads = threads_of(
        (d for s, d in digests.items() if basis.members.get(s, s) in chosen),
        basis.members,
        basis.rows,
        basis.bounds,
    )
    # A thread with a session not closed yet has no reflection of it as it is.
    settled = {t: d for t, d in threads.items() if not set(d.session_ids) & set(basis.extra)}
    threads.update(await with_reflections(tx, settled))
    return threads


async def _from_every_digest(tx: UserTx, basis: _Basis, session_id: str, now_us: int) -> Resumed:
    """The resume from every digest of the user, unreflected (when the chosen threads'
    digests changed under the resume)."""
    everything = threads_of(
        [*(d for d in await tx.digests() if d.thread_id not in basis.extra), *basis.extra.values()],
        basis.members,
        basis.rows,
        basis.bounds,
    )
    ranked, tier = resume_candidates(list(everything.values()), session_id, now_us)
    candidates = tuple(ranked)
    return Resumed(basis.bridge, candidates, tier, left_off(candidates[0]) if candidates else ())
