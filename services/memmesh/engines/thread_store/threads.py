"""Reading topic threads: a thread's digest merged from its sessions' digests, with the
Reflector's summary and "where we left off" when it has a reflection of it as it is."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from memmesh.engines.thread_store.domain.model import (
    Digest,
    DigestHead,
    ThreadReflection,
    digest_bounds,
)
from memmesh.engines.thread_store.domain.topics import (
    MATCH_SESSIONS,
    MATCH_THREADS,
    MERGE_SESSIONS,
    TopicRow,
    merge_heads,
    newest_sessions,
    recent_threads,
    threads_of,
    topic_of,
)
from memmesh.engines.thread_store.ports import UserTx
from memmesh.observation.observer import RULES_PROVIDER


async def read_thread(tx: UserTx, thread_id: str, reflected: bool = True) -> Digest | None:
    """The thread an id names (a thread's id or one of its sessions'), merged, with its
    reflection unless `reflected` is False; None when none of its sessions has a digest."""
    return (await read_threads(tx, [thread_id], reflected)).get(thread_id)


async def read_threads(
    tx: UserTx, thread_ids: Sequence[str], reflected: bool = True
) -> dict[str, Digest]:
    """The threads these ids name, as read_thread reads one, by the id asked (ids naming no
    digested thread are left out); the user's membership and heads are read once."""
    members, rows = await tx.topic_members(), await tx.topic_rows()
    topics = {thread_id: topic_of(thread_id, members, rows) for thread_id in thread_ids}
    heads = await tx.digest_heads()
    digests = await tx.digests_of(newest_sessions(heads, members, topics.values(), MERGE_SESSIONS))
    bounds = digest_bounds(await tx.remembers_everything())
    threads = threads_of(digests.values(), members, rows, bounds)
    if reflected:
        threads = await with_reflections(tx, threads)
    return {asked: threads[topic] for asked, topic in topics.items() if topic in threads}


async def joinable_threads(
    tx: UserTx,
    members: Mapping[str, str],
    rows: Mapping[str, TopicRow],
    exclude: str,
    heads: Sequence[DigestHead] | None = None,
) -> list[Digest]:
    """The user's most recently updated threads, each as its newest sessions say it, the
    session `exclude` left out of them: the threads a session may join (`heads`: the
    user's digest heads, when already read)."""
    heads = [
        h for h in (await tx.digest_heads() if heads is None else heads) if h.thread_id != exclude
    ]
    merged = merge_heads(heads, members, rows)
    wanted = [h.thread_id for h in sorted(merged, key=lambda h: -h.update_us)[:MATCH_THREADS]]
    sessions = newest_sessions(heads, members, wanted, MATCH_SESSIONS)
    digests = await tx.digests_of(sorted(sessions))
    return recent_threads(list(threads_of(digests.values(), members, rows).values()))


async def with_reflections(tx: UserTx, threads: Mapping[str, Digest]) -> dict[str, Digest]:
    """The threads, each with the summary of its stored reflection (a reflection is deleted
    whenever what it was made from changes) and, when a model wrote it, its bullets (the
    rules' bullets say no more than the ones built from the thread's fields)."""
    reflections = await tx.reflections_of(sorted(threads))
    return {
        topic_id: _reflected(thread, reflections[topic_id]) if topic_id in reflections else thread
        for topic_id, thread in threads.items()
    }


def _reflected(thread: Digest, reflection: ThreadReflection) -> Digest:
    made = reflection.provenance
    by_model = made.provider != RULES_PROVIDER and not made.fallback_used
    return dataclasses.replace(
        thread,
        summary=reflection.summary,
        said_summary=thread.summary,
        left_off=reflection.left_off if by_model else (),
        summary_provenance=reflection.provenance,
    )
