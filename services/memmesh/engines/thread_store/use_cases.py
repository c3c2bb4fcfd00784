"""Use cases of the ThreadStore: sessions, archive, working memory, digests, resume, graph."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar

from memmesh.engines.thread_store import erasure
from memmesh.engines.thread_store.domain.episodes import build_episodes
from memmesh.engines.thread_store.domain.graph import (
    MAX_NODES,
    THREAD_PREFIX,
    co_occurrences,
    effective_limits,
    other_end,
    strongest,
    turn_nodes,
)
from memmesh.engines.thread_store.domain.loops import MAX_OPEN_LOOPS, loop_changes, loop_order
from memmesh.engines.thread_store.domain.model import (
    Appended,
    ClosedSession,
    Digest,
    Edge,
    Episode,
    Expansion,
    GraphNode,
    Mode,
    Resumed,
    Role,
    SessionRow,
    Turn,
    TurnContext,
    UserActivity,
    WorkingMemory,
    digest_bounds,
)
from memmesh.engines.thread_store.domain.resume import (
    DAY_US,
    left_off,
    thread_about,
    tier_of,
)
from memmesh.engines.thread_store.domain.sessions import session_mode
from memmesh.engines.thread_store.domain.summary import (
    DIGEST_WINDOW_TURNS,
    SUMMARY_WINDOW_TURNS,
    build_digest,
    summarise,
)
from memmesh.engines.thread_store.domain.tone import (
    MAX_SIGNALS as MAX_TONE_SIGNALS,
)
from memmesh.engines.thread_store.domain.tone import (
    HeardSignal,
    learned_tone,
    tone_signals,
)
from memmesh.engines.thread_store.domain.topics import (
    DEFAULT_RETENTION_DAYS,
    expired,
    forget_cached_digests,
    joined_topic,
    merge_heads,
    threads_of,
    topic_of,
)
from memmesh.engines.thread_store.observing import Observing
from memmesh.engines.thread_store.ports import (
    IndexChange,
    IndexFeed,
    ThreadStore,
    TurnBuffer,
    UserTx,
)
from memmesh.engines.thread_store.restriction import link_session, restrict_turns
from memmesh.engines.thread_store.resuming import DEFAULT_KEPT_USERS, Resumes
from memmesh.engines.thread_store.threads import joinable_threads, read_thread, read_threads
from memmesh.errors import FieldViolation, InvalidInput
from memmesh.observation import ObservationSettings
from memmesh.outbox import Effect
from memmesh.policy.sensitivity import Exposure, exposure_of, stricter
from memmesh.storage.reclaim import Reclaimer

log = logging.getLogger(__name__)
T = TypeVar("T")

# REMEMBER_EVERYTHING keeps threads this many times the tenant's window (seed 001 §2.22).
REMEMBER_EVERYTHING_RETENTION = 3
# A turn context looks up at most this many graph nodes for its entities part.
MAX_ENTITY_LOOKUPS = 32
# Start nodes one Expand may name.
MAX_EXPAND_NODES = 20

MAX_ACTIVE_LOOPS = 10


class ThreadStoreUseCases:
    """Every read and write is scoped to one (tenant, user)."""

    def __init__(
        self,
        store: ThreadStore,
        buffer: TurnBuffer | None,
        session_gap_us: int,
        working_memory_turns: int,
        index: IndexFeed | None = None,
        erasure_attempt_s: float | None = None,
        reclaim_wait_s: float | None = None,
        observing: Observing | None = None,
        retention: Callable[[str], int] | None = None,
        kept_resume_users: int = DEFAULT_KEPT_USERS,
    ) -> None:
        self._store = store
        # What a session start's resume built from each user's rows, for the next one.
        self._resumes = Resumes(kept_resume_users)
        # Microseconds an unpinned thread is kept after its last use, per tenant.
        self._retention_us = retention or (lambda tenant_id: DEFAULT_RETENTION_DAYS * DAY_US)
        # The Observer and the Reflector (the rules alone unless given otherwise).
        self._observing = observing or Observing(
            store, ObservationSettings(mode="deterministic_only")
        )
        self._erasure_attempt_s = erasure_attempt_s
        # How long an erasure's answer waits for the store to reclaim the deleted bytes
        # (None: until done); the reclaim goes on in the background after that.
        self._reclaimer = Reclaimer(lambda: self._store.reclaim_erased(), reclaim_wait_s)
        self._buffer = buffer
        self._index = index
        self._gap_us = session_gap_us
        self._wm_turns = working_memory_turns

    async def open_session(
        self, tenant_id: str, user_id: str, session_id: str, now_us: int
    ) -> tuple[Mode, int]:
        """The mode a turn of the session would have now, and the last interaction; stores nothing."""
        async with self._store.read(tenant_id, user_id) as tx:
            activity = await tx.user_activity()
            known = await tx.session(session_id) is not None
        return session_mode(
            known, activity, now_us, self._gap_us
        ), activity.last_interaction_us if activity else 0

    async def append_turn(self, tenant_id: str, user_id: str, turn: Turn) -> Appended:
        """Archive a turn, update session, summary, loops and graph; a known turn id changes nothing.

        The turn is archived with the stricter of its given exposure and the classification of
        its text; only SAFE_TO_SPEAK turns open loops and feed the summary and the graph."""
        turn = dataclasses.replace(turn, exposure=stricter(turn.exposure, exposure_of(turn.text)))
        speakable = turn.exposure == Exposure.SAFE_TO_SPEAK
        # Read before the turns are: a buffer refresh from turns an erasure changed meanwhile
        # is refused.
        epoch = await self._buffer_epoch(tenant_id, user_id)
        async with self._store.write(tenant_id, user_id) as tx:
            stored_mode = await tx.turn_mode(turn.turn_id)
            if stored_mode is not None:
                stored = await tx.turns_of([turn.turn_id])
                return Appended(
                    stored_mode,
                    duplicate=True,
                    exposure=stored[0].exposure if stored else turn.exposure,
                )
            if turn.turn_id in await tx.forgotten_session(turn.session_id):
                # A retry of a turn whose conversation was forgotten must not bring it back.
                return Appended(Mode.IN_SESSION, duplicate=True, exposure=turn.exposure)
            activity = await tx.user_activity()
            session = await tx.session(turn.session_id)
            mode = session_mode(session is not None, activity, turn.time_us, self._gap_us)
            closed, opened = loop_changes(
                tenant_id, user_id, turn, await tx.open_loops(MAX_OPEN_LOOPS)
            )
            opened = opened if speakable else []
            await tx.insert_turn(turn, mode)
            queued: list[Effect] = []
            if turn.exposure < Exposure.INTERNAL_ONLY:
                # An INTERNAL_ONLY turn is never indexed: it can never become an excerpt.
                queued = await tx.queue_index(
                    IndexChange(turns=(turn,)), key=f"turn:{turn.turn_id}"
                )
            await tx.save_loops([*closed, *opened])
            if turn.role == Role.USER and speakable:
                nodes = turn_nodes(turn.text)
                await tx.add_graph(turn.session_id, nodes, co_occurrences(nodes))
                await tx.add_tone_signals(turn, tone_signals(turn.text), MAX_TONE_SIGNALS)
            updated = await self._updated_session(tx, session, turn)
            if activity is None or turn.time_us >= activity.last_interaction_us:
                await tx.save_activity(UserActivity(turn.time_us, turn.session_id))
            previous = (
                activity.last_session_id
                if activity and activity.last_session_id != turn.session_id
                else ""
            )
            recent = (
                await tx.session_turns(
                    turn.session_id, self._wm_turns, max_exposure=Exposure.SAFE_TO_TEXT
                )
                if self._buffer
                else []
            )
        await self._first_attempt(tenant_id, user_id, queued)
        if previous and mode == Mode.SESSION_START:
            await self._soft_close(tenant_id, user_id, previous)
        if self._buffer is not None:
            await self._refresh_buffer(
                tenant_id, user_id, turn.session_id, updated.turn_count, recent, epoch
            )
        return Appended(
            mode,
            duplicate=False,
            loops_closed=tuple(closed),
            loops_opened=tuple(opened),
            exposure=turn.exposure,
        )

    async def _updated_session(
        self, tx: UserTx, session: SessionRow | None, turn: Turn
    ) -> SessionRow:
        summary = session.rolling_summary if session else ""
        if turn.role == Role.USER and turn.exposure == Exposure.SAFE_TO_SPEAK:
            window = await tx.session_turns(
                turn.session_id,
                SUMMARY_WINDOW_TURNS,
                user_only=True,
                max_exposure=Exposure.SAFE_TO_SPEAK,
            )
            summary = summarise(window).text
        row = SessionRow(
            session_id=turn.session_id,
            start_us=min(session.start_us, turn.time_us) if session else turn.time_us,
            last_us=max(session.last_us, turn.time_us) if session else turn.time_us,
            turn_count=(session.turn_count if session else 0) + 1,
            rolling_summary=summary,
            closed=False,
        )
        await tx.save_session(row)
        return row

    async def _first_attempt(
        self, tenant_id: str, user_id: str, queued: list[Effect], timeout_s: float | None = None
    ) -> None:
        """Deliver what a write queued for the index now, when the feed is wired; the outbox
        keeps whatever does not go through (the write stands either way)."""
        if self._index is None or not queued:
            return
        try:
            await self._index.first_attempt(tenant_id, user_id, queued, timeout_s)
        except Exception:
            log.warning(
                "first attempt of index effects failed; the outbox delivers them later",
                exc_info=True,
            )

    async def _buffer_epoch(self, tenant_id: str, user_id: str) -> int | None:
        """The buffer's erasure epoch of the user; None without a buffer or when unreadable."""
        if self._buffer is None:
            return None
        try:
            return await self._buffer.epoch(tenant_id, user_id)
        except Exception:
            log.warning("session buffer epoch read failed", exc_info=True)
            return None

    async def _refresh_buffer(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        version: int,
        recent: list[Turn],
        epoch: int | None,
    ) -> None:
        assert self._buffer is not None
        try:
            if epoch is None:
                # Without the epoch a refresh could undo an erasure: the archive serves instead.
                raise LookupError("erasure epoch unknown")
            await self._buffer.replace(tenant_id, user_id, session_id, version, recent, epoch)
        except Exception:
            # The archive has the turn; a stale buffer must not be served, so drop it.
            log.warning("session buffer refresh failed; falling back to the archive", exc_info=True)
            try:
                await self._buffer.drop(tenant_id, user_id, session_id)
            except Exception:
                log.warning("session buffer drop failed", exc_info=True)

    async def _soft_close(self, tenant_id: str, user_id: str, session_id: str) -> None:
        """A session the user moved on from gets its digest (seed 001 §2.18 SOFT_CLOSED)."""
        try:
            await self.close_session(tenant_id, user_id, session_id, skip_closed=True)
        except Exception:
            # The turn is archived; CloseSession or the next session start digests it later.
            log.warning("soft close of the previous session failed", exc_info=True)

    async def close_session(
        self, tenant_id: str, user_id: str, session_id: str, skip_closed: bool = False
    ) -> ClosedSession | None:
        """Close the session and store its digest and episodes (rebuilt from its turns), queueing
        them for the index; None for an unknown session."""
        async with self._store.write(tenant_id, user_id) as tx:
            session = await tx.session(session_id)
            if session is None or (skip_closed and session.closed):
                return None
            turns = await tx.session_turns(
                session_id, DIGEST_WINDOW_TURNS, max_exposure=Exposure.SAFE_TO_SPEAK
            )
            rich = await tx.remembers_everything()
            built = build_digest(
                session_id,
                turns,
                await tx.thread_loops(session_id),
                session.last_us,
                digest_bounds(rich),
            )
            if not session.closed:
                await tx.save_session(dataclasses.replace(session, closed=True))
            await tx.save_digest(built)
            episodes = build_episodes(session_id, turns)
            kept = {episode.episode_id for episode in episodes}
            stale = tuple(
                e.episode_id
                for e in await tx.thread_episodes(session_id)
                if e.episode_id not in kept
            )
            await tx.replace_episodes(session_id, episodes)
            stored = await tx.digest(session_id)
            members = await tx.topic_members()
            if session_id not in members:
                rows = await tx.topic_rows()
                threads = await joinable_threads(tx, members, rows, exclude=session_id)
                await tx.join_topic(session_id, joined_topic(built, threads) or session_id)
            await link_session(tx, built, turns)
            expired_ids = await self._expire(tx, tenant_id, session.last_us, rich)
            queued = await tx.queue_index(
                IndexChange(removed=(*stale, *expired_ids), digests=(stored or built, *episodes))
            )
        await self._first_attempt(tenant_id, user_id, queued)
        await self._observing.session_closed(tenant_id, user_id, session_id)
        return ClosedSession(stored or built, episodes)

    async def _expire(self, tx: UserTx, tenant_id: str, now_us: int, rich: bool) -> list[str]:
        """Let the user's threads past their retention go (a user who asked to remember
        everything keeps them three times as long); the index ids of what went (their
        sessions' digests and episodes)."""
        members, rows = await tx.topic_members(), await tx.topic_rows()
        heads = merge_heads(await tx.digest_heads(), members, rows)
        window = self._retention_us(tenant_id) * (REMEMBER_EVERYTHING_RETENTION if rich else 1)
        removed: list[str] = []
        for topic in expired(heads, now_us, window):
            sessions = sorted({s for s, t in members.items() if t == topic} | {topic})
            for session_id in sessions:
                episodes = await tx.thread_episodes(session_id)
                removed += [session_id, *(e.episode_id for e in episodes)]
            await tx.expire_thread(topic, sessions)
        return removed

    async def thread_episodes(self, tenant_id: str, user_id: str, thread_id: str) -> list[Episode]:
        """The episode digests a close wrote for the thread, in thread order."""
        async with self._store.read(tenant_id, user_id) as tx:
            return await tx.thread_episodes(thread_id)

    async def working_memory(
        self, tenant_id: str, user_id: str, session_id: str, max_turns: int
    ) -> WorkingMemory:
        """The session's last turns (oldest first), rolling summary, open loops and last interaction."""
        memory, _, _, _ = await self._memory(tenant_id, user_id, session_id, max_turns)
        return memory

    async def _memory(
        self, tenant_id: str, user_id: str, session_id: str, max_turns: int, tone: bool = False
    ) -> tuple[WorkingMemory, SessionRow | None, UserActivity | None, list[HeardSignal]]:
        """The working memory with the session and activity rows it came from and, with
        `tone`, the user's tone signals (read in the same transaction)."""
        limit = min(max_turns or self._wm_turns, self._wm_turns)
        buffered = await self._buffered(tenant_id, user_id, session_id)
        async with self._store.read(tenant_id, user_id) as tx:
            # INTERNAL_ONLY turns never leave the ThreadStore; the others carry their exposure.
            turns = (
                [t for t in buffered if t.exposure < Exposure.INTERNAL_ONLY]
                if buffered is not None
                else await tx.session_turns(session_id, limit, max_exposure=Exposure.SAFE_TO_TEXT)
            )
            session = await tx.session(session_id)
            loops = loop_order(await tx.open_loops(MAX_OPEN_LOOPS))[:MAX_ACTIVE_LOOPS]
            activity = await tx.user_activity()
            heard = await tx.tone_signals(MAX_TONE_SIGNALS) if tone else []
        memory = WorkingMemory(
            turns=tuple(turns[-limit:]),
            rolling_summary=session.rolling_summary if session else "",
            active_loops=tuple(loops),
            last_interaction_us=activity.last_interaction_us if activity else 0,
        )
        return memory, session, activity, heard

    async def turn_context(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        now_us: int,
        max_turns: int,
        mode: Mode | None,
        resume_budget_s: float | None = None,
        entity_node_ids: Sequence[str] = (),
        entity_fan_out: int = 0,
        resume_thread_id: str = "",
    ) -> TurnContext:
        """The mode (given, or decided as open_session decides it), the working memory, on a
        session start the resume and, when node ids are given, the entities one edge away
        (as expand at depth 1). The resume and the entities are best effort, each within
        `resume_budget_s`: a failed or late one is flagged and leaves the rest intact."""
        if len(entity_node_ids) > MAX_ENTITY_LOOKUPS:
            raise InvalidInput(
                [FieldViolation("entity_node_ids", f"must have at most {MAX_ENTITY_LOOKUPS} items")]
            )
        entities = (
            _best_effort(
                partial(
                    self.expand,
                    tenant_id,
                    user_id,
                    list(entity_node_ids),
                    1,
                    entity_fan_out,
                    MAX_ENTITY_LOOKUPS,
                    # The bundle's entities are people and things, not threads or decisions.
                    typed=False,
                ),
                resume_budget_s,
                "entities",
            )
            if entity_node_ids
            else _nothing()
        )
        (memory, session, activity, heard), (expansion, entities_failed) = await asyncio.gather(
            self._memory(tenant_id, user_id, session_id, max_turns, tone=True), entities
        )
        decided = mode or session_mode(session is not None, activity, now_us, self._gap_us)
        context = TurnContext(
            decided,
            memory,
            entities=expansion,
            entities_unavailable=entities_failed,
            tone=learned_tone(heard, now_us),
        )
        if resume_thread_id:
            # A thread the user asked to resume answers the resume part, in session or not.
            resuming = partial(self.resumed_thread, tenant_id, user_id, resume_thread_id, now_us)
        elif decided == Mode.SESSION_START:
            resuming = partial(self.resume, tenant_id, user_id, session_id, now_us)
        else:
            return context
        resumed, resume_failed = await _best_effort(resuming, resume_budget_s, "resume")
        return dataclasses.replace(context, resumed=resumed, resume_unavailable=resume_failed)

    async def _buffered(self, tenant_id: str, user_id: str, session_id: str) -> list[Turn] | None:
        if self._buffer is None:
            return None
        try:
            return await self._buffer.recent(tenant_id, user_id, session_id)
        except Exception:
            log.warning("session buffer read failed; serving the archive", exc_info=True)
            return None

    async def resume(self, tenant_id: str, user_id: str, session_id: str, now_us: int) -> Resumed:
        """Episode bridge (the previous session's summary), candidate threads in resume order
        and "where we left off" for the top one. The previous session, when the user has not
        closed it yet (its digest is built when the next session's first turn arrives), takes
        part with a digest built from its turns now (not stored), in the thread it would
        join on its close."""
        async with self._store.read(tenant_id, user_id) as tx:
            return await self._resumes.resume(tx, (tenant_id, user_id), session_id, now_us)

    async def resumed_thread(
        self, tenant_id: str, user_id: str, thread_id: str, now_us: int
    ) -> Resumed:
        """One thread as the resume answer: its tier and "where we left off" (nothing for a
        thread the user has no digest of)."""
        async with self._store.read(tenant_id, user_id) as tx:
            digest = await read_thread(tx, thread_id)
        if digest is None:
            return Resumed("", (), "")
        return Resumed("", (digest,), tier_of(digest, now_us).value, left_off(digest))

    async def resume_thread(
        self, tenant_id: str, user_id: str, topic: str, session_id: str, now_us: int
    ) -> tuple[Digest, tuple[str, ...]] | None:
        """The thread the topic names, its use recorded, and its "where we left off"; None
        when no thread is about the topic."""
        async with self._store.write(tenant_id, user_id) as tx:
            members, rows = await tx.topic_members(), await tx.topic_rows()
            bounds = digest_bounds(await tx.remembers_everything())
            threads = threads_of(await tx.digests(), members, rows, bounds)
            own = topic_of(session_id, members, rows)
            found = thread_about(list(threads.values()), topic, own, now_us)
            if found is None:
                return None
            await tx.mark_topic(found.thread_id, None, now_us)
            digest = await read_thread(tx, found.thread_id)
        digest = digest or found
        return digest, left_off(digest)

    async def expand(
        self,
        tenant_id: str,
        user_id: str,
        node_ids: list[str],
        depth: int,
        fan_out: int,
        max_nodes: int = MAX_EXPAND_NODES,
        typed: bool = True,
    ) -> Expansion:
        """Breadth-first walk from the known start nodes (at most `max_nodes`); each node keeps
        its fan_out heaviest edges. Without `typed` only entity co-occurrence is walked."""
        if len(node_ids) > max_nodes:
            raise InvalidInput([FieldViolation("node_ids", f"must have at most {max_nodes} items")])
        depth, fan_out = effective_limits(depth, fan_out)
        async with self._store.read(tenant_id, user_id) as tx:
            labels = await tx.node_labels(sorted(set(node_ids)))
            reached = sorted(labels)
            seen, walked = set(reached), set[tuple[frozenset[str], str]]()
            edges: list[Edge] = []
            frontier = list(reached)
            for _ in range(depth):
                if not frontier:
                    break
                by_node: dict[str, list[Edge]] = {}
                at = set(frontier)
                for edge in await tx.neighbours(frontier, typed):
                    for end in {edge.from_node_id, edge.to_node_id} & at:
                        if end == edge.from_node_id or edge.linked:
                            by_node.setdefault(end, []).append(edge)
                next_frontier: list[str] = []
                for node in frontier:
                    for edge in strongest(by_node.get(node, []), fan_out, node):
                        target = other_end(edge, node)
                        if target not in seen:
                            if len(seen) >= MAX_NODES:
                                continue
                            seen.add(target)
                            reached.append(target)
                            next_frontier.append(target)
                        key = (frozenset((node, target)), edge.edge_type)
                        if key not in walked:
                            walked.add(key)
                            edges.append(edge)
                frontier = next_frontier
            labels.update(await tx.node_labels([n for n in reached if n not in labels]))
            asked = [n.removeprefix(THREAD_PREFIX) for n in reached if n.startswith(THREAD_PREFIX)]
            if asked:
                found = await read_threads(tx, asked)
                for thread_id in asked:
                    thread = found.get(thread_id)
                    labels[THREAD_PREFIX + thread_id] = thread.title if thread else ""
        return Expansion(tuple(GraphNode(n, labels.get(n, "")) for n in reached), tuple(edges))

    async def forget_session(
        self, tenant_id: str, user_id: str, session_id: str
    ) -> erasure.SessionForgotten:
        """Delete every turn of the session and every copy of them; the ids of its turns. The
        thread it belonged to is reflected again from the sessions left."""
        async with self._store.read(tenant_id, user_id) as tx:
            topic = (await tx.topic_members()).get(session_id, "")
        forgotten, queued = await erasure.forget_session(
            self._store, self._buffer, (tenant_id, user_id), session_id
        )
        self._let_go((tenant_id, user_id))
        pending = await self._after_erasure(tenant_id, user_id, queued)
        if topic and forgotten.forgotten:
            await self._observing.thread_changed(tenant_id, user_id, topic)
        return dataclasses.replace(forgotten, pending_index_effects=pending)

    async def redact_turns(
        self, tenant_id: str, user_id: str, turn_ids: Sequence[str], terms: Sequence[str]
    ) -> erasure.Redaction:
        """Remove the sentences holding any term from the turns (all text without terms) and
        rebuild what they fed; the turns changed."""
        redaction, queued = await erasure.redact_turns(
            self._store, self._buffer, (tenant_id, user_id), turn_ids, terms, DIGEST_WINDOW_TURNS
        )
        self._let_go((tenant_id, user_id))
        pending = await self._after_erasure(tenant_id, user_id, queued)
        return dataclasses.replace(redaction, pending_index_effects=pending)

    async def set_retention_mode(
        self, tenant_id: str, user_id: str, remember_everything: bool
    ) -> bool:
        """Keep the user's retention mode (seed 001 §2.22); False when it was already so."""
        async with self._store.write(tenant_id, user_id) as tx:
            if await tx.remembers_everything() == remember_everything:
                return False
            await tx.set_remembers_everything(remember_everything)
            return True

    async def forget_tone(self, tenant_id: str, user_id: str) -> int:
        """Forget how the user likes to be spoken to (every tone signal), nothing else; how
        many signals went."""
        async with self._store.write(tenant_id, user_id) as tx:
            return await tx.drop_tone_signals()

    async def forget_user(self, tenant_id: str, user_id: str) -> erasure.UserForgotten:
        """Delete everything the ThreadStore holds about the user, and the user's index."""
        forgotten, queued = await erasure.forget_user(
            self._store, self._buffer, (tenant_id, user_id)
        )
        self._let_go((tenant_id, user_id))
        pending = await self._after_erasure(tenant_id, user_id, queued)
        return dataclasses.replace(forgotten, pending_index_effects=pending)

    def _let_go(self, who: tuple[str, str]) -> None:
        """After an erasure: nothing this process keeps holds the erased words any more."""
        self._resumes.drop(who)
        forget_cached_digests()

    async def _after_erasure(self, tenant_id: str, user_id: str, queued: list[Effect]) -> int:
        """Deliver the index's part of an erasure now (the outbox keeps what fails), then make
        the deleted bytes unreadable where the store can; how many of the user's index
        changes are still queued. The erasure stands either way, but until that count is 0
        the index may still find the words: the caller hears it and retries, and a repeat
        (with nothing new to erase) delivers what is queued first. The first attempt and
        the delivery of what is left share one erasure attempt's time."""
        started = time.monotonic()
        if queued:
            await self._first_attempt(tenant_id, user_id, queued, self._erasure_attempt_s)
        pending = 0
        if self._index is not None:
            left = (
                None
                if self._erasure_attempt_s is None
                else max(self._erasure_attempt_s - (time.monotonic() - started), 0.0)
            )
            try:
                pending = await self._index.settle(tenant_id, user_id, left)
            except Exception:
                log.warning("the index's queued changes could not be delivered", exc_info=True)
                pending = 1
        if queued:
            await self._reclaimer.reclaimed()
        return pending

    async def observed(self) -> None:
        """Wait for the Observer and Reflector runs under way (they run in the background
        when a model answers)."""
        await self._observing.settled()

    async def close(self) -> None:
        """Let a reclaim pass under way finish; stop observing."""
        await self._observing.close()
        await self._reclaimer.close()

    async def restrict_turns(
        self, tenant_id: str, user_id: str, turn_ids: list[str], exposure: Exposure
    ) -> int:
        """Make archived turns at least this strict and rebuild what they fed; the number raised."""
        scope = (tenant_id, user_id)
        raised, queued = await restrict_turns(
            self._store, self._buffer, scope, turn_ids, exposure, DIGEST_WINDOW_TURNS
        )
        self._let_go(scope)
        await self._first_attempt(tenant_id, user_id, queued)
        return raised

    async def pin_thread(self, tenant_id: str, user_id: str, thread_id: str, pinned: bool) -> bool:
        """Pin or unpin the thread an id names (a thread's id or one of its sessions'); False
        when there is none."""
        return await self._mark(tenant_id, user_id, thread_id, pinned, None) is not None

    async def record_use(
        self, tenant_id: str, user_id: str, thread_id: str, now_us: int
    ) -> Digest | None:
        """Count a use of the thread and move its last use to now (never backwards)."""
        return await self._mark(tenant_id, user_id, thread_id, None, now_us)

    async def _mark(
        self, tenant_id: str, user_id: str, thread_id: str, pinned: bool | None, used: int | None
    ) -> Digest | None:
        async with self._store.write(tenant_id, user_id) as tx:
            found = await read_thread(tx, thread_id)
            if found is None:
                return None
            await tx.mark_topic(found.thread_id, pinned, used)
            return await read_thread(tx, found.thread_id)


async def _best_effort(
    call: Callable[[], Awaitable[T]], budget_s: float | None, part: str
) -> tuple[T | None, bool]:
    """A best-effort part of a turn context: its value, or None and True when it failed or
    ran out of its share of the deadline. The part starts here: a turn context cancelled
    before this runs leaves no coroutine behind never awaited."""
    try:
        return await asyncio.wait_for(call(), budget_s), False
    except TimeoutError:
        log.warning("%s part of a turn context ran out of its share of the deadline", part)
    except Exception:
        log.warning("%s part of a turn context failed", part, exc_info=True)
    return None, True


async def _nothing() -> tuple[None, bool]:
    return None, False
