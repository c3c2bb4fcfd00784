"""ThreadStore use cases over real backends: SQLite alone, and PostgreSQL with the Redis buffer."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio as aioredis

from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.adapters.turn_buffer import RedisTurnBuffer
from memmesh.engines.thread_store.domain.model import Mode, Role, Turn
from memmesh.engines.thread_store.domain.sessions import DEFAULT_SESSION_GAP_US
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.storage.sql import Dialect, PostgresDatabase, SqliteDatabase

T0 = 1_767_225_600_000_000
MINUTE = 60_000_000


@pytest_asyncio.fixture(params=["sqlite", "postgres+redis"])
async def service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ThreadStoreUseCases]:
    if request.param == "sqlite":
        store = SqlThreadStore(
            SqliteDatabase.open(tmp_path / "thread_store.sqlite3", migrations(Dialect.SQLITE))
        )
        buffer = None
    else:
        url = request.getfixturevalue("postgres_url")
        store = SqlThreadStore(
            await PostgresDatabase.open(url, "thread_store", migrations(Dialect.POSTGRES))
        )
        buffer = RedisTurnBuffer.from_url(request.getfixturevalue("redis_url"))
    yield ThreadStoreUseCases(store, buffer, DEFAULT_SESSION_GAP_US, 6)
    if buffer is not None:
        await buffer.close()
    await store.close()


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


def turn(
    index: int, text: str, session: str = "s1", role: Role = Role.USER, minute: int | None = None
) -> Turn:
    return Turn(
        f"turn-{index}", session, role, text, T0 + (index if minute is None else minute) * MINUTE
    )


async def test_append_is_idempotent_by_turn_id(service: ThreadStoreUseCases) -> None:
    who = user()
    first = await service.append_turn(*who, turn(0, "I need to book the dentist."))
    before = await service.working_memory(*who, "s1", 0)
    again = await service.append_turn(*who, turn(0, "I need to book the dentist."))
    assert first.mode == again.mode == Mode.SESSION_START
    assert (first.duplicate, again.duplicate) == (False, True)
    assert [loop.text for loop in first.loops_opened] == [
        "Book the dentist"
    ] and again.loops_opened == ()
    assert await service.working_memory(*who, "s1", 0) == before


async def test_working_memory_is_the_last_turns_oldest_first_even_after_a_late_turn(
    service: ThreadStoreUseCases,
) -> None:
    who = user()
    for index in range(1, 9):
        role = Role.USER if index % 2 else Role.ASSISTANT
        await service.append_turn(
            *who, turn(index, f"Message number {index} about gardening plans.", role=role)
        )
    await service.append_turn(*who, turn(20, "A late message about roses and tulips.", minute=0))
    memory = await service.working_memory(*who, "s1", 0)
    assert [t.turn_id for t in memory.turns] == [f"turn-{i}" for i in range(3, 9)]
    assert [t.turn_id for t in (await service.working_memory(*who, "s1", 2)).turns] == [
        "turn-7",
        "turn-8",
    ]
    assert memory.last_interaction_us == T0 + 8 * MINUTE
    assert "gardening" in memory.rolling_summary


async def test_session_rule_over_appends(service: ThreadStoreUseCases) -> None:
    who = user()
    assert (await service.append_turn(*who, turn(0, "Hello there."))).mode == Mode.SESSION_START
    assert (
        await service.append_turn(*who, turn(30, "Still here.", minute=30))
    ).mode == Mode.IN_SESSION
    assert (
        await service.append_turn(*who, turn(61, "Back again.", minute=61))
    ).mode == Mode.SESSION_START
    assert (
        await service.append_turn(*who, turn(62, "New id.", session="s2", minute=62))
    ).mode == Mode.SESSION_START
    mode, last = await service.open_session(*who, "s2", T0 + 70 * MINUTE)
    assert (mode, last) == (Mode.IN_SESSION, T0 + 62 * MINUTE)
    assert (await service.open_session(*who, "s3", T0 + 70 * MINUTE))[0] == Mode.SESSION_START


async def test_a_new_session_soft_closes_the_previous_one_and_resume_bridges_it(
    service: ThreadStoreUseCases,
) -> None:
    who = user()
    await service.append_turn(*who, turn(0, "I need to call Sarah about the Lisbon trip."))
    await service.append_turn(*who, turn(1, "Sure, when?", role=Role.ASSISTANT))
    await service.append_turn(*who, turn(2, "Hi again.", session="s2", minute=120))
    resumed = await service.resume(*who, "s2", T0 + 121 * MINUTE)
    assert resumed.episode_bridge == "I need to call Sarah about the Lisbon trip."
    assert [d.thread_id for d in resumed.candidates] == ["s1"] and resumed.tier == "HOT"
    assert resumed.candidates[0].next_step == "Call Sarah about the Lisbon trip"


async def test_loops_close_across_sessions_when_the_user_says_done(
    service: ThreadStoreUseCases,
) -> None:
    who = user()
    await service.append_turn(*who, turn(0, "I need to book the dentist."))
    appended = await service.append_turn(
        *who, turn(1, "I booked the dentist for Monday.", session="s2", minute=90)
    )
    assert [loop.text for loop in appended.loops_closed] == ["Book the dentist"]
    assert (await service.working_memory(*who, "s2", 0)).active_loops == ()


async def test_forget_thread_removes_turns_loops_graph_and_buffer(
    service: ThreadStoreUseCases,
) -> None:
    who = user()
    await service.append_turn(*who, turn(0, "Remind me to email Sarah and Tom."))
    await service.close_session(*who, "s1")
    assert (await service.forget_session(*who, "s1")).forgotten
    memory = await service.working_memory(*who, "s1", 0)
    assert memory.turns == () and memory.active_loops == () and memory.rolling_summary == ""
    assert (await service.expand(*who, ["entity:sarah"], 2, 5)).nodes == ()
    assert (await service.resume(*who, "s2", T0 + MINUTE)).candidates == ()
    assert await service.thread_episodes(*who, "s1") == []


async def test_expand_is_bounded_and_ordered_by_weight_then_id(
    service: ThreadStoreUseCases,
) -> None:
    who = user()
    await service.append_turn(*who, turn(0, "Sarah met Tom and Ana in Paris."))
    await service.append_turn(*who, turn(1, "Sarah and Tom flew to Rome."))
    await service.append_turn(*who, turn(2, "Tom and Zoe cooked with Ben."))
    one = await service.expand(*who, ["entity:sarah"], 1, 2)
    assert [n.node_id for n in one.nodes] == ["entity:sarah", "entity:tom", "entity:ana"]
    assert [(e.to_node_id, e.weight) for e in one.edges] == [("entity:tom", 2), ("entity:ana", 1)]
    two = await service.expand(*who, ["entity:sarah"], 2, 2)
    assert [n.node_id for n in two.nodes][:3] == ["entity:sarah", "entity:tom", "entity:ana"]
    assert len(two.nodes) <= 1 + 2 + 2 * 2
    assert await service.expand(*who, ["entity:nobody"], 3, 20) == await service.expand(
        *user(), ["entity:sarah"], 3, 20
    )


async def test_redis_buffer_keeps_the_newest_version_under_one_hash_tag(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    buffer = RedisTurnBuffer(client)
    who = user()
    try:
        newer = [turn(i, f"t{i}") for i in range(2, 8)]
        await buffer.replace(*who, "s1", 7, newer)
        await buffer.replace(*who, "s1", 5, [turn(0, "stale")])
        assert await buffer.recent(*who, "s1") == newer
        keys = sorted(k.decode() for k in await client.keys(f"memmesh:{{{who[0]}\x1f{who[1]}}}:*"))
        assert len(keys) == 2 and all(f"{{{who[0]}\x1f{who[1]}}}" in key for key in keys)
        assert await client.ttl(keys[0]) > 0
        await buffer.drop(*who, "s1")
        assert await buffer.recent(*who, "s1") is None
    finally:
        await buffer.close()


async def test_redis_buffer_refuses_a_refresh_read_before_a_drop(redis_url: str) -> None:
    buffer = RedisTurnBuffer.from_url(redis_url)
    who = user()
    try:
        epoch = await buffer.epoch(*who)
        # An erasure drops the session (and every drop raises the user's epoch) ...
        await buffer.drop(*who, "s1")
        assert await buffer.epoch(*who) > epoch
        # ... so turns read before it are never written back, whatever their version.
        await buffer.replace(*who, "s1", 9, [turn(0, "My sister lives in Porto.")], epoch)
        assert await buffer.recent(*who, "s1") is None
        await buffer.replace(*who, "s1", 9, [turn(0, "Kept.")], await buffer.epoch(*who))
        assert await buffer.recent(*who, "s1") == [turn(0, "Kept.")]
        # Forgetting the user raises the epoch too.
        epoch = await buffer.epoch(*who)
        await buffer.drop_user(*who)
        await buffer.replace(*who, "s2", 1, [turn(1, "My PIN is 4711.", session="s2")], epoch)
        assert await buffer.recent(*who, "s1") is None and await buffer.recent(*who, "s2") is None
    finally:
        await buffer.close()


class RedactingMidAppend(RedisTurnBuffer):
    """The real Redis buffer, where a redaction of the user's words commits after an append
    read its turns and before it refreshes the buffer (as when an erasure and the next turn
    of the user are served at once)."""

    redaction: tuple[ThreadStoreUseCases, tuple[str, str], str, str] | None = None

    async def replace(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.redaction is not None:
            service, who, turn_id, term = self.redaction
            self.redaction = None
            assert (await service.redact_turns(*who, [turn_id], [term])).redacted_turn_ids
        await super().replace(*args, **kwargs)


async def test_a_redaction_between_an_appends_read_and_its_buffer_refresh_is_not_undone(
    request: pytest.FixtureRequest,
) -> None:
    url = request.getfixturevalue("postgres_url")
    store = SqlThreadStore(
        await PostgresDatabase.open(url, "thread_store", migrations(Dialect.POSTGRES))
    )
    buffer = RedactingMidAppend.from_url(request.getfixturevalue("redis_url"))
    assert isinstance(buffer, RedactingMidAppend)
    service = ThreadStoreUseCases(store, buffer, DEFAULT_SESSION_GAP_US, 6)
    who = user()
    try:
        await service.append_turn(*who, turn(0, "My sister lives in Porto. I like tea."))
        buffer.redaction = (service, who, "turn-0", "Porto")
        await service.append_turn(*who, turn(1, "We play chess on Sundays."))
        memory = await service.working_memory(*who, "s1", 0)
        assert [t.text for t in memory.turns] == ["I like tea.", "We play chess on Sundays."]
        assert "Porto" not in memory.rolling_summary
        assert not any("Porto" in t.text for t in await buffer.recent(*who, "s1") or [])
    finally:
        await buffer.close()
        await store.close()


class GatedReclaimStore(SqlThreadStore):
    """The real SQLite store, whose reclaim passes wait for a gate (a slow VACUUM)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.gate = asyncio.Event()
        self.started = 0
        self.finished = 0

    async def reclaim_erased(self) -> bool:
        self.started += 1
        await self.gate.wait()
        self.finished += 1
        return await super().reclaim_erased()


async def test_an_erasure_answers_while_a_slow_reclaim_goes_on_and_a_burst_shares_passes(
    tmp_path: Path,
) -> None:
    store = GatedReclaimStore(
        SqliteDatabase.open(tmp_path / "thread_store.sqlite3", migrations(Dialect.SQLITE))
    )
    service = ThreadStoreUseCases(store, None, DEFAULT_SESSION_GAP_US, 6, reclaim_wait_s=0.05)
    who = user()
    try:
        for n in range(3):
            await service.append_turn(*who, turn(n, f"My sister lives in Porto. Note {n}."))
        # Each erasure is in force when it answers, though the reclaim has not finished.
        for n in range(3):
            await service.redact_turns(*who, [f"turn-{n}"], ["Porto"])
            memory = await service.working_memory(*who, "s1", 0)
            assert [t.text for t in memory.turns][n] == f"Note {n}."
        assert (store.started, store.finished) == (1, 0)
        store.gate.set()
        await service.close()
        # The two erasures during the first pass share one more pass.
        assert (store.started, store.finished) == (2, 2)
    finally:
        await store.close()
