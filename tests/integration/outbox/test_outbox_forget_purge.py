"""A forget drops the user's queued and dead effects that still carry what was forgotten, on
SQLite and PostgreSQL: by key, kind or carried text, inside the forgetting transaction or on
its own, and never another user's; the operator's tally counts what is left by kind."""

from __future__ import annotations

from test_outbox_suite import FAST, Opener, Recorder, open_db, who  # noqa: F401

from memmesh.errors import DependencyFailed
from memmesh.outbox import Effect, Outbox, PurgeFilter, outbox_lock, purge_in


def said(key: str, text: str, kind: str = "extract", lane: str = "x") -> Effect:
    return Effect(kind, text.encode(), key, lane)


async def test_purge_by_carried_text_key_and_kind_keeps_the_rest(
    open_db: Opener,  # noqa: F811 (the suite's fixture)
) -> None:
    tenant, user = who()
    other = (tenant, user + "-other")
    outbox = Outbox(await open_db(), {}, FAST)
    await outbox.enqueue(
        tenant,
        user,
        [
            said("e1", "My sister Ana lives in PORTO."),
            said("e2", "I live in Lisbon."),
            said("e3", "note", kind="index"),
            said("e4", "I play the cello.", lane="y"),
        ],
    )
    await outbox.enqueue(*other, [said("o1", "My sister Ana lives in Porto.")])

    dropped = await outbox.purge_matching(tenant, user, PurgeFilter(carrying=(b"porto",)))
    assert dropped == 1
    assert await outbox.purge_matching(tenant, user, PurgeFilter(kinds=("index",))) == 1
    assert await outbox.purge_matching(tenant, user, PurgeFilter(keys=("e4",))) == 1
    assert [e.key for e in await outbox.pending(tenant, user)] == ["e2"]
    # Another user's copy is not touched; an empty filter drops nothing.
    assert [e.key for e in await outbox.pending(*other)] == ["o1"]
    assert await outbox.purge_matching(tenant, user, PurgeFilter()) == 0


async def test_dead_letters_carrying_the_words_go_too_and_the_tally_counts_by_kind(
    open_db: Opener,  # noqa: F811 (the suite's fixture)
) -> None:
    tenant, user = who()
    recorder = Recorder()
    outbox = Outbox(await open_db(), {"extract": recorder, "fill": recorder}, FAST)
    recorder.failures["e1"] = [DependencyFailed("peer", "INVALID_ARGUMENT")]
    await outbox.enqueue_and_deliver(
        tenant, user, [said("e1", "My brother Kwame is a pilot.")], timeout_s=2.0
    )
    [dead] = await outbox.dead(tenant, user)
    assert dead.key == "e1"
    recorder.failures["e2"] = [DependencyFailed("peer", "UNAVAILABLE")] * 3
    await outbox.enqueue_and_deliver(
        tenant, user, [said("e2", "I live in Lisbon.", kind="fill")], timeout_s=0.5
    )
    assert await outbox.tally(tenant, user) == [("dead", "extract", 1), ("pending", "fill", 1)]

    assert await outbox.purge_matching(tenant, user, PurgeFilter(carrying=(b"Kwame",))) == 1
    assert await outbox.dead(tenant, user) == []
    assert await outbox.tally(tenant, user) == [("pending", "fill", 1)]


async def test_purge_in_runs_inside_the_forgetting_transaction(
    open_db: Opener,  # noqa: F811 (the suite's fixture)
) -> None:
    tenant, user = who()
    database = await open_db()
    outbox = Outbox(database, {}, FAST)
    await outbox.enqueue(tenant, user, [said("e1", "Ana"), said("e2", "Lisbon")])
    async with database.write(*outbox_lock(tenant, user)) as tx:
        assert await purge_in(tx, tenant, user, PurgeFilter(carrying=(b"ana",))) == 1
    assert [e.key for e in await outbox.pending(tenant, user)] == ["e2"]
