"""Restricting archived turns (seed 001 §2.11.11, §2.14, §2.18).

A turn that evidences an atom the user made INTERNAL_ONLY (or a SAFE_TO_TEXT atom) gets at
least that exposure, never a looser one. Everything the ThreadStore builds from transcript
text (rolling summary, loops, graph, digest and episodes) is rebuilt from the session's
SAFE_TO_SPEAK turns, and the copies in the retrieval index and the session buffer that
could tell what a restricted turn said are replaced (the index's through the outbox, queued
with the change).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from memmesh.engines.thread_store.domain.episodes import MAX_EPISODES, build_episodes, episode_id_of
from memmesh.engines.thread_store.domain.graph import co_occurrences, digest_links, turn_nodes
from memmesh.engines.thread_store.domain.model import (
    Digest,
    Episode,
    Role,
    SessionRow,
    Turn,
    digest_bounds,
)
from memmesh.engines.thread_store.domain.summary import (
    SUMMARY_WINDOW_TURNS,
    build_digest,
    summarise,
)
from memmesh.engines.thread_store.ports import IndexChange, ThreadStore, TurnBuffer, UserTx
from memmesh.errors import DependencyFailed
from memmesh.outbox import Effect
from memmesh.policy.sensitivity import Exposure

log = logging.getLogger(__name__)

# Turns of one session read to rebuild its graph; sessions are far shorter.
GRAPH_SCAN_LIMIT = 100_000


async def restrict_turns(
    store: ThreadStore,
    buffer: TurnBuffer | None,
    scope: tuple[str, str],
    turn_ids: Sequence[str],
    exposure: Exposure,
    digest_window_turns: int,
) -> tuple[int, list[Effect]]:
    """Raise the turns to `exposure` where they are looser and rebuild what they fed; the
    number of turns raised and the index effects queued with the change. Idempotent: a
    retry after a failure finds the same turns."""
    tenant_id, user_id = scope
    async with store.read(tenant_id, user_id) as tx:
        tightened = [
            dataclasses.replace(turn, exposure=exposure)
            for turn in await tx.turns_of(sorted(set(turn_ids)))
            if turn.exposure < exposure
        ]
        sessions = sorted({turn.session_id for turn in tightened})
        digested = [
            session_id for session_id in sessions if await tx.digest(session_id) is not None
        ]
    if not tightened:
        return 0, []
    ids = [turn.turn_id for turn in tightened]
    await drop_buffers(buffer, tenant_id, user_id, sessions, required=True)
    async with store.write(tenant_id, user_id) as tx:
        raised = await tx.restrict_turns(ids, exposure)
        await tx.delete_loops_from(ids)
        await tx.drop_tone_signals(ids)
        rebuilt: list[Digest | Episode] = []
        for session_id in sessions:
            session = await tx.session(session_id)
            if session is not None:
                rebuilt += await rebuild_session(tx, session, digest_window_turns)
        # The index copies go with the change: every copy that could tell what the turns said
        # is removed, then what may still be shown is indexed again.
        episode_ids = [episode_id_of(s, n) for s in digested for n in range(1, MAX_EPISODES + 1)]
        shown = tuple(turn for turn in tightened if turn.exposure < Exposure.INTERNAL_ONLY)
        change = IndexChange(
            removed=(*ids, *digested, *episode_ids), turns=shown, digests=tuple(rebuilt)
        )
        queued = await tx.queue_index(change)
    # A turn appended meanwhile may have refilled a buffer from the archive before the change.
    await drop_buffers(buffer, tenant_id, user_id, sessions, required=False)
    return raised, queued


async def rebuild_session(
    tx: UserTx, session: SessionRow, digest_window_turns: int
) -> list[Digest | Episode]:
    """Rolling summary, graph and (for a digested session) digest and episodes of the
    session, from its SAFE_TO_SPEAK turns; the rebuilt digest and episodes."""
    session_id = session.session_id
    speakable = Exposure.SAFE_TO_SPEAK
    window = await tx.session_turns(
        session_id, SUMMARY_WINDOW_TURNS, user_only=True, max_exposure=speakable
    )
    await tx.save_session(dataclasses.replace(session, rolling_summary=summarise(window).text))
    await tx.clear_graph(session_id)
    for turn in await tx.session_turns(
        session_id, GRAPH_SCAN_LIMIT, user_only=True, max_exposure=speakable
    ):
        nodes = turn_nodes(turn.text)
        await tx.add_graph(session_id, nodes, co_occurrences(nodes))
    if await tx.digest(session_id) is None:
        return []
    turns: list[Turn] = await tx.session_turns(
        session_id, digest_window_turns, max_exposure=speakable
    )
    bounds = digest_bounds(await tx.remembers_everything())
    loops = await tx.thread_loops(session_id)
    built = build_digest(session_id, turns, loops, session.last_us, bounds)
    await tx.save_digest(built)
    # What the Observer and the Reflector made from the old turns goes; until the session is
    # observed again its thread reads as its sessions' digests merged.
    await tx.drop_observed(session_id)
    await link_session(tx, built, turns)
    episodes = build_episodes(session_id, turns)
    await tx.replace_episodes(session_id, episodes)
    digest = await tx.digest(session_id)
    return [*([digest] if digest else []), *episodes]


async def link_session(tx: UserTx, digest: Digest, turns: Sequence[Turn]) -> None:
    """Add to the graph what the session (its digest, its user turns) says about the thread
    it belongs to."""
    topic = (await tx.topic_members()).get(digest.thread_id, digest.thread_id)
    said = [turn.text for turn in turns if turn.role == Role.USER]
    nodes, links = digest_links(topic, digest, said)
    await tx.add_links(digest.thread_id, nodes, links)


async def drop_buffers(
    buffer: TurnBuffer | None,
    tenant_id: str,
    user_id: str,
    session_ids: Sequence[str],
    required: bool,
) -> None:
    if buffer is None:
        return
    for session_id in session_ids:
        try:
            await buffer.drop(tenant_id, user_id, session_id)
        except Exception as error:
            if required:
                raise DependencyFailed(
                    "redis", "UNAVAILABLE", "session buffer unavailable; restriction not applied"
                ) from error
            log.warning("session buffer drop after a restriction failed", exc_info=True)
