"""The effect outbox on SQLite and on PostgreSQL: order, idempotency keys, retries with
backoff, dead letters that never block the effects behind them, restarts."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.errors import DependencyFailed
from memmesh.outbox import (
    ATTEMPTS_EXHAUSTED,
    NO_HANDLER,
    Claim,
    Done,
    Effect,
    EffectQueue,
    EffectRejected,
    Outbox,
    QueuedEffect,
    RetryPolicy,
    outbox_migration,
    outbox_trace_migration,
)
from memmesh.storage.sql import Database, Dialect, PostgresDatabase, SqliteDatabase

FAST = RetryPolicy(
    attempt_timeout_s=0.5,
    initial_backoff_s=0.01,
    max_backoff_s=0.05,
    max_attempts=5,
    idle_poll_s=0.05,
)

Opener = Callable[[], Awaitable[Database]]


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def open_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens the same database again on each call (a restart sees what was stored)."""
    opened: list[Database] = []
    schema = f"outbox_{uuid.uuid4().hex[:10]}"

    async def opener() -> Database:
        if request.param == "sqlite":
            database: Database = SqliteDatabase.open(
                tmp_path / "engine.sqlite3",
                [outbox_migration(Dialect.SQLITE, 1), outbox_trace_migration()],
            )
        else:
            url = request.getfixturevalue("postgres_url")
            database = await PostgresDatabase.open(
                url, schema, [outbox_migration(Dialect.POSTGRES, 1), outbox_trace_migration()]
            )
        opened.append(database)
        return database

    yield opener
    for database in opened:
        with contextlib.suppress(Exception):  # some were closed by the test already
            await database.close()
    if request.param == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(
            request.getfixturevalue("postgres_url"), autocommit=True
        ) as c:
            await c.execute(f"DROP SCHEMA {schema} CASCADE")


def who() -> tuple[str, str]:
    token = uuid.uuid4().hex[:8]
    return f"t-{token}", f"u-{token}"


class Recorder:
    """A handler that records deliveries and fails the effects it is told to."""

    def __init__(self) -> None:
        self.delivered: list[str] = []
        self.failures: dict[str, list[BaseException]] = {}

    async def __call__(self, effect: QueuedEffect, timeout_s: float) -> object:
        queued = self.failures.get(effect.key)
        if queued:
            raise queued.pop(0)
        self.delivered.append(effect.key)
        return effect.payload.decode()


def effect(key: str, lane: str = "", kind: str = "k") -> Effect:
    return Effect(kind, key.encode(), key, lane)


async def until(predicate: Callable[[], Awaitable[bool]], timeout_s: float = 5.0) -> None:
    for _ in range(int(timeout_s / 0.02)):
        if await predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def test_effects_are_delivered_once_in_order_by_the_drainer(open_db: Opener) -> None:
    recorder = Recorder()
    outbox = Outbox(await open_db(), {"k": recorder}, FAST)
    tenant, user = who()
    outbox.start()
    try:
        await outbox.enqueue(tenant, user, [effect("a"), effect("b"), effect("c")])
        await until(lambda: _empty(outbox, tenant, user))
    finally:
        await outbox.stop()
    assert recorder.delivered == ["a", "b", "c"]


async def _empty(outbox: Outbox, tenant: str, user: str) -> bool:
    return await outbox.count_pending(tenant, user) == 0


async def test_a_key_already_queued_is_not_queued_twice(open_db: Opener) -> None:
    recorder = Recorder()
    outbox = Outbox(await open_db(), {"k": recorder}, FAST)
    tenant, user = who()
    await outbox.enqueue(tenant, user, [effect("a"), effect("b")])
    await outbox.enqueue(tenant, user, [effect("a"), effect("c")])
    assert [e.key for e in await outbox.pending(tenant, user)] == ["a", "b", "c"]
    await outbox.run_once()
    assert recorder.delivered == ["a", "b", "c"]


async def test_enqueue_and_deliver_makes_the_first_attempt_now(open_db: Opener) -> None:
    recorder = Recorder()
    outbox = Outbox(await open_db(), {"k": recorder}, FAST)
    tenant, user = who()
    recorder.failures["down"] = [DependencyFailed("retrieval_ranker", "UNAVAILABLE")]
    delivery = await outbox.enqueue_and_deliver(
        tenant,
        user,
        [effect("x", "one"), effect("down", "two"), effect("after", "two")],
        timeout_s=1.0,
    )
    assert delivery.results == {"x": "x"}
    assert delivery.pending == {"down", "after"}
    # The failed effect holds back its own lane only, and is retried after its backoff.
    pending = await outbox.pending(tenant, user)
    assert [(e.key, e.attempts) for e in pending] == [("down", 1), ("after", 0)]
    assert pending[0].last_error == "retrieval_ranker:UNAVAILABLE"
    await until(lambda: _drained(outbox, tenant, user))
    assert recorder.delivered == ["x", "down", "after"]


async def test_a_patient_first_attempt_may_use_all_the_time_left(open_db: Opener) -> None:
    async def slow(queued: QueuedEffect, timeout_s: float) -> object:
        # A peer that needs longer than one attempt's share to answer.
        needed_s = FAST.attempt_timeout_s + 0.3
        if timeout_s < needed_s:
            await asyncio.sleep(timeout_s)
            raise DependencyFailed("peer", "DEADLINE_EXCEEDED")
        await asyncio.sleep(needed_s)
        return queued.key

    outbox = Outbox(await open_db(), {"k": slow}, FAST)
    tenant, user = who()
    hurried = await outbox.enqueue_and_deliver(tenant, user, [effect("a", "one")], timeout_s=2.0)
    # One attempt's share runs out first: the effect waits for the drainer.
    assert hurried.results == {} and hurried.pending == {"a"}
    await outbox.purge(tenant, user)
    patient = await outbox.enqueue_and_deliver(
        tenant,
        user,
        [effect("b", "one"), effect("c", "two")],
        timeout_s=2.0,
        patient=frozenset({"b"}),
    )
    assert patient.results == {"b": "b"} and patient.pending == {"c"}


async def _drained(outbox: Outbox, tenant: str, user: str) -> bool:
    await outbox.run_once()
    return await _empty(outbox, tenant, user)


async def test_follow_ups_are_queued_with_the_delivery_and_delivered_in_the_same_call(
    open_db: Opener,
) -> None:
    seen: list[str] = []

    async def first(queued: QueuedEffect, timeout_s: float) -> object:
        seen.append(queued.key)
        return Done("first-result", then=(effect("second", "other", "follow"),))

    async def follow(queued: QueuedEffect, timeout_s: float) -> object:
        seen.append(queued.key)
        return None

    outbox = Outbox(await open_db(), {"first": first, "follow": follow}, FAST)
    tenant, user = who()
    delivery = await outbox.enqueue_and_deliver(
        tenant, user, [effect("one", "lane", "first")], timeout_s=1.0
    )
    assert delivery.results == {"one": "first-result", "second": None}
    assert seen == ["one", "second"] and not delivery.pending


async def test_a_poison_effect_goes_to_the_dead_letters_and_the_next_one_still_runs(
    open_db: Opener,
) -> None:
    recorder = Recorder()
    outbox = Outbox(await open_db(), {"k": recorder}, FAST)
    tenant, user = who()
    recorder.failures["poison"] = [
        DependencyFailed("atom_extractor", "INVALID_ARGUMENT", "bad turn")
    ]
    recorder.failures["rejected"] = [EffectRejected("undecodable")]
    effects = [effect("poison"), effect("rejected"), effect("next"), effect("odd", kind="nobody")]
    await outbox.enqueue(tenant, user, effects)
    await outbox.run_once()
    assert recorder.delivered == ["next"]
    dead = await outbox.dead(tenant, user)
    assert [(d.key, d.attempts) for d in dead] == [("poison", 1), ("rejected", 1), ("odd", 1)]
    assert dead[0].reason == "atom_extractor:INVALID_ARGUMENT"
    assert dead[1].reason.endswith("undecodable")
    assert dead[2].reason.startswith(NO_HANDLER)
    assert dead[0].payload == b"poison"
    assert await outbox.pending(tenant, user) == []


async def test_an_effect_failing_every_attempt_dies_after_the_cap(open_db: Opener) -> None:
    recorder = Recorder()
    outbox = Outbox(await open_db(), {"k": recorder}, FAST)
    tenant, user = who()
    recorder.failures["flaky"] = [RuntimeError("boom")] * FAST.max_attempts
    await outbox.enqueue(tenant, user, [effect("flaky"), effect("behind")])
    await until(lambda: _drained(outbox, tenant, user))
    dead = await outbox.dead(tenant, user)
    assert [(d.key, d.attempts) for d in dead] == [("flaky", FAST.max_attempts)]
    assert dead[0].reason == f"{ATTEMPTS_EXHAUSTED}: RuntimeError"
    assert recorder.delivered == ["behind"]


async def test_the_drainer_picks_up_what_was_queued_before_a_restart(open_db: Opener) -> None:
    tenant, user = who()
    database = await open_db()
    before = Outbox(database, {"k": Recorder()}, FAST)
    await before.enqueue(tenant, user, [effect("a"), effect("b")])
    await database.close()
    recorder = Recorder()
    after = Outbox(await open_db(), {"k": recorder}, FAST)
    after.start()
    try:
        await until(lambda: _empty(after, tenant, user))
    finally:
        await after.stop()
    assert recorder.delivered == ["a", "b"]


async def test_a_claim_left_by_a_crashed_deliverer_lapses(open_db: Opener) -> None:
    tenant, user = who()
    database = await open_db()
    outbox = Outbox(database, {"k": Recorder()}, FAST)
    await outbox.enqueue(tenant, user, [effect("a")])
    now = 10**17  # far ahead of the time it was queued
    queue = EffectQueue(database)
    claimed = await queue.claim_head(tenant, user, "", now, Claim(("",), lease_us=1_000))
    assert claimed is not None and claimed.key == "a"
    # Claimed elsewhere: hidden until the lease runs out, then claimable again.
    assert await queue.claim_head(tenant, user, "", now + 10, Claim(("",), lease_us=1_000)) is None
    assert (
        await queue.claim_head(tenant, user, "", now + 2_000, Claim(("",), lease_us=1_000))
        is not None
    )


async def test_purge_drops_queued_and_dead_effects(open_db: Opener) -> None:
    recorder = Recorder()
    outbox = Outbox(await open_db(), {"k": recorder}, FAST)
    tenant, user = who()
    recorder.failures["poison"] = [EffectRejected("no")]
    recorder.failures["wait"] = [RuntimeError("later")]
    await outbox.enqueue(tenant, user, [effect("poison"), effect("wait")])
    await outbox.run_once()
    assert (
        await outbox.count_pending(tenant, user) == 1 and len(await outbox.dead(tenant, user)) == 1
    )
    await outbox.purge(tenant, user)
    assert await outbox.pending(tenant, user) == [] and await outbox.dead(tenant, user) == []


def test_backoff_doubles_and_is_capped() -> None:
    policy = RetryPolicy(initial_backoff_s=0.2, max_backoff_s=1.0)
    assert [policy.backoff_s(n) for n in (1, 2, 3, 4, 10)] == [0.2, 0.4, 0.8, 1.0, 1.0]


async def test_deliver_queued_delivers_a_users_backing_off_effects_now(open_db: Opener) -> None:
    """What a caller that must not answer before the user's effects are through uses: the
    effects waiting out a long backoff are attempted now, in order, follow-ups included; what
    still fails is counted, and other users' effects are left to the drainer."""
    recorder = Recorder()
    slow = RetryPolicy(attempt_timeout_s=0.5, initial_backoff_s=60, max_backoff_s=60)

    async def spawn(effect_: QueuedEffect, timeout_s: float) -> object:
        await recorder(effect_, timeout_s)
        return Done(None, then=[effect("child", lane="other")])

    outbox = Outbox(await open_db(), {"k": recorder, "spawn": spawn}, slow)
    tenant, user = who()
    _, other = who()
    recorder.failures["a"] = [RuntimeError("down"), RuntimeError("down again")]
    delivery = await outbox.enqueue_and_deliver(
        tenant, user, [effect("a"), effect("b", kind="spawn")], 2.0
    )
    await outbox.enqueue(tenant, other, [effect("theirs")])
    assert delivery.pending == {"a", "b"}  # "a" backs off a minute, "b" waits behind it

    assert await outbox.deliver_queued(tenant, user, 2.0) == 2  # "a" failed again, "b" waits
    assert recorder.delivered == []
    assert await outbox.deliver_queued(tenant, user, 2.0) == 0
    assert recorder.delivered == ["a", "b", "child"]
    assert await outbox.count_pending(tenant, other) == 1


async def test_deliver_queued_keeps_to_its_lanes_and_a_patient_caller_waits_past_one_attempt(
    open_db: Opener,
) -> None:
    slow = RetryPolicy(attempt_timeout_s=0.2, initial_backoff_s=60, max_backoff_s=60)
    delivered: list[str] = []

    async def sluggish(effect_: QueuedEffect, timeout_s: float) -> object:
        await asyncio.sleep(0.9)  # longer than one attempt's deadline and its grace
        delivered.append(effect_.key)
        return None

    outbox = Outbox(await open_db(), {"k": sluggish}, slow)
    tenant, user = who()
    await outbox.enqueue(tenant, user, [effect("mine", lane="a"), effect("other", lane="b")])

    assert await outbox.deliver_queued(tenant, user, 2.0, lanes=("a",)) == 1
    assert delivered == []  # one attempt's deadline cut it short
    assert await outbox.deliver_queued(tenant, user, 2.0, lanes=("a",), patient=True) == 0
    assert delivered == ["mine"]  # lane "b" was left to the drainer
    assert await outbox.count_pending(tenant, user) == 1
