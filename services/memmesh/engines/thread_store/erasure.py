"""Erasure of what the user said (seed 001 §2.11.5, §2.11.11, §2.17 Q16: forget means forget).

Three scopes, one rule: every copy of the words goes, and what was built from them is
rebuilt from what remains.

- Redacting turns removes the sentences that hold a forgotten term (or the whole text,
  leaving an empty stub turn) from the named turns and from the assistant's later replies
  in their sessions (a reply may have repeated the words), then rebuilds the sessions' rolling summaries, graph,
  digests and episodes, deletes the loops the turns opened, drops the session buffers and
  replaces the turns' and digests' index copies.
- Forgetting a session deletes its turns, summary, digest, episodes, loops and graph rows,
  drops its buffer and removes its index copies; the turn ids (never the text) are kept so
  a repeat answers the same ids.
- Forgetting the user deletes every row of the user, every buffered session, the user's
  queued and dead index effects, and queues the removal of the user's whole index.

Each change is one transaction that also takes the forgotten text out of the effects still
queued for the index and queues the index's own erasure; the caller then delivers it and
has the store reclaim the deleted bytes (WAL truncation on SQLite, VACUUM on PostgreSQL).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.engines.thread_store.domain.episodes import MAX_EPISODES, episode_id_of
from memmesh.engines.thread_store.domain.model import Digest, Episode, Role, Turn
from memmesh.engines.thread_store.domain.redaction import redact, usable_terms
from memmesh.engines.thread_store.ports import IndexChange, ThreadStore, TurnBuffer, UserTx
from memmesh.engines.thread_store.restriction import drop_buffers, rebuild_session
from memmesh.errors import DependencyFailed
from memmesh.outbox import Effect
from memmesh.policy.sensitivity import Exposure

log = logging.getLogger(__name__)

# Turns of one session read to forget it; sessions are far shorter.
FORGET_SCAN_LIMIT = 100_000


@dataclass(frozen=True)
class Redaction:
    """The turns a redaction changed, in archive order, and those left as empty stubs."""

    redacted_turn_ids: tuple[str, ...] = ()
    emptied_turn_ids: tuple[str, ...] = ()
    # The user's index changes still queued once the call answers (see _after_erasure).
    pending_index_effects: int = 0


@dataclass(frozen=True)
class SessionForgotten:
    """Whether anything of the session was stored, and the ids of every turn it had."""

    forgotten: bool
    turn_ids: tuple[str, ...]
    pending_index_effects: int = 0


@dataclass(frozen=True)
class UserForgotten:
    """Whether anything of the user was stored, and how many turns were deleted."""

    forgotten: bool
    removed_turn_count: int
    pending_index_effects: int = 0


def _redacted(turns: Sequence[Turn], terms: Sequence[str]) -> list[Turn]:
    """The turns whose text the redaction changes, with their new text."""
    changed: list[Turn] = []
    for turn in turns:
        result = redact(turn.text, terms)
        if result.changed:
            changed.append(dataclasses.replace(turn, text=result.text))
    return changed


async def _with_echoes(tx: UserTx, turn_ids: Sequence[str], terms: Sequence[str]) -> list[Turn]:
    """The named turns and, when terms name what goes, the assistant's replies after them in
    their sessions: a reply that repeated the forgotten words ("Got it, your sister lives in
    Porto") loses those sentences too. Without terms only the named turns are read (a whole
    turn goes, never a reply the user did not name)."""
    named = await tx.turns_of(turn_ids)
    if not usable_terms(terms):
        return named
    first: dict[str, tuple[int, str]] = {}
    for turn in named:
        at = (turn.time_us, turn.turn_id)
        first[turn.session_id] = min(first.get(turn.session_id, at), at)
    echoes: list[Turn] = []
    for session_id, at in sorted(first.items()):
        echoes += [
            turn
            for turn in await tx.session_turns(session_id, FORGET_SCAN_LIMIT)
            if turn.role == Role.ASSISTANT and (turn.time_us, turn.turn_id) > at
        ]
    known = {turn.turn_id for turn in named}
    every = [*named, *(turn for turn in echoes if turn.turn_id not in known)]
    return sorted(every, key=lambda turn: (turn.time_us, turn.turn_id))


def _episode_ids(session_ids: Sequence[str]) -> list[str]:
    # Every id an episode of the session can have, so none survives a re-segmentation.
    return [episode_id_of(s, n) for s in session_ids for n in range(1, MAX_EPISODES + 1)]


async def redact_turns(
    store: ThreadStore,
    buffer: TurnBuffer | None,
    scope: tuple[str, str],
    turn_ids: Sequence[str],
    terms: Sequence[str],
    digest_window_turns: int,
) -> tuple[Redaction, list[Effect]]:
    """Redact the turns and rebuild what they fed; what changed and the index effects queued.
    Idempotent: a repeat finds nothing left to remove and changes nothing."""
    tenant_id, user_id = scope
    wanted = sorted(set(turn_ids))
    async with store.read(tenant_id, user_id) as tx:
        planned = _redacted(await _with_echoes(tx, wanted, terms), terms)
    if not planned:
        return Redaction(), []
    # The buffers go first: with Redis down nothing changes and the caller retries.
    sessions = sorted({turn.session_id for turn in planned})
    await drop_buffers(buffer, tenant_id, user_id, sessions, required=True)
    async with store.write(tenant_id, user_id) as tx:
        # Decided again under the user's lock, from the rows as they are now.
        changed = _redacted(await _with_echoes(tx, wanted, terms), terms)
        ids = [turn.turn_id for turn in changed]
        sessions = sorted({turn.session_id for turn in changed})
        await tx.set_turn_texts([(turn.turn_id, turn.text) for turn in changed])
        # A loop's text is the sentence that opened it; a tone signal may be any of them.
        await tx.delete_loops_from(ids)
        await tx.drop_tone_signals(ids)
        digested = [s for s in sessions if await tx.digest(s) is not None]
        rebuilt: list[Digest | Episode] = []
        for session_id in sessions:
            session = await tx.session(session_id)
            if session is not None:
                rebuilt += await rebuild_session(tx, session, digest_window_turns)
        await tx.scrub_queued_index(ids, sessions)
        shown = tuple(
            turn for turn in changed if turn.text and turn.exposure < Exposure.INTERNAL_ONLY
        )
        change = IndexChange(
            removed=(*ids, *digested, *_episode_ids(digested)),
            turns=shown,
            digests=tuple(rebuilt),
            erase=True,
        )
        queued = await tx.queue_index(change) if changed else []
    # A turn appended meanwhile may have refilled a buffer from the archive before the change.
    await drop_buffers(buffer, tenant_id, user_id, sessions, required=False)
    redaction = Redaction(tuple(ids), tuple(turn.turn_id for turn in changed if not turn.text))
    return redaction, queued


async def forget_session(
    store: ThreadStore, buffer: TurnBuffer | None, scope: tuple[str, str], session_id: str
) -> tuple[SessionForgotten, list[Effect]]:
    """Delete the session and every copy of its turns; its turn ids and the effects queued."""
    tenant_id, user_id = scope
    await _drop_session_buffer(buffer, tenant_id, user_id, session_id)
    queued: list[Effect] = []
    async with store.write(tenant_id, user_id) as tx:
        ids = [turn.turn_id for turn in await tx.session_turns(session_id, FORGET_SCAN_LIMIT)]
        every_id = sorted({*await tx.forgotten_session(session_id), *ids})
        forgotten = await tx.forget_thread(session_id)
        if forgotten:
            await tx.record_forgotten_session(session_id, every_id)
            await tx.scrub_queued_index(ids, [session_id])
            change = IndexChange(
                removed=(session_id, *_episode_ids([session_id]), *ids), erase=True
            )
            queued = await tx.queue_index(change)
    if forgotten:
        await drop_buffers(buffer, tenant_id, user_id, [session_id], required=False)
    return SessionForgotten(forgotten, tuple(every_id)), queued


async def forget_user(
    store: ThreadStore, buffer: TurnBuffer | None, scope: tuple[str, str]
) -> tuple[UserForgotten, list[Effect]]:
    """Delete everything of the user and queue the removal of the user's whole index."""
    tenant_id, user_id = scope
    await _drop_user_buffers(buffer, tenant_id, user_id, required=True)
    async with store.write(tenant_id, user_id) as tx:
        had = bool(await tx.session_ids()) or await tx.user_activity() is not None
        removed = await tx.forget_user()
        # Queued even for a user the archive no longer knows: the index may still hold the
        # user's atoms, and a repeat must reach a ranker that was down the first time.
        queued = await tx.queue_index(IndexChange(forget_user=True))
    await _drop_user_buffers(buffer, tenant_id, user_id, required=False)
    return UserForgotten(had or removed > 0, removed), queued


async def _drop_session_buffer(
    buffer: TurnBuffer | None, tenant_id: str, user_id: str, session_id: str
) -> None:
    if buffer is None:
        return
    try:
        await buffer.drop(tenant_id, user_id, session_id)
    except Exception as error:
        raise DependencyFailed(
            "redis", "UNAVAILABLE", "session buffer unavailable; forget not applied"
        ) from error


async def _drop_user_buffers(
    buffer: TurnBuffer | None, tenant_id: str, user_id: str, required: bool
) -> None:
    if buffer is None:
        return
    try:
        await buffer.drop_user(tenant_id, user_id)
    except Exception as error:
        if required:
            raise DependencyFailed(
                "redis", "UNAVAILABLE", "session buffer unavailable; forget not applied"
            ) from error
        log.warning("session buffer drop after forgetting a user failed", exc_info=True)
