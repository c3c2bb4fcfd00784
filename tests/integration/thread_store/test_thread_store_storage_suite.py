"""One contract suite for the ThreadStore's storage port, on SQLite and on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.domain.model import (
    Digest,
    GraphNode,
    Loop,
    Mode,
    Role,
    SessionRow,
    Turn,
    UserActivity,
)
from memmesh.engines.thread_store.ports import ThreadStore
from memmesh.storage.sql import Dialect, PostgresDatabase, SqliteDatabase

T0 = 1_767_225_600_000_000


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ThreadStore]:
    if request.param == "sqlite":
        database = SqliteDatabase.open(
            tmp_path / "thread_store.sqlite3", migrations(Dialect.SQLITE)
        )
        opened: ThreadStore = SqlThreadStore(database)
    else:
        url = request.getfixturevalue("postgres_url")
        opened = SqlThreadStore(
            await PostgresDatabase.open(url, "thread_store", migrations(Dialect.POSTGRES))
        )
    yield opened
    await opened.close()


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


def turn(
    index: int, session: str = "s1", role: Role = Role.USER, time_us: int | None = None
) -> Turn:
    return Turn(
        f"turn-{index}", session, role, f"text {index}", T0 + index if time_us is None else time_us
    )


def digest(thread_id: str, update_us: int = T0) -> Digest:
    return Digest(
        thread_id, "Title", "Summary.", ("Sarah",), ("Why?",), "Call Sarah", ("turn-1",), update_us
    )


async def test_turns_round_trip_with_their_mode_and_unknown_turns_have_none(
    store: ThreadStore,
) -> None:
    who = user()
    async with store.write(*who) as tx:
        await tx.insert_turn(turn(1), Mode.SESSION_START)
    async with store.read(*who) as tx:
        assert await tx.turn_mode("turn-1") == Mode.SESSION_START
        assert await tx.turn_mode("turn-2") is None
        assert await tx.session_turns("s1", 6) == [turn(1)]


async def test_session_turns_are_the_newest_in_time_then_id_order(store: ThreadStore) -> None:
    who = user()
    async with store.write(*who) as tx:
        for index in (5, 3, 9, 1, 7):
            await tx.insert_turn(turn(index), Mode.IN_SESSION)
        await tx.insert_turn(turn(4, role=Role.ASSISTANT), Mode.IN_SESSION)
        await tx.insert_turn(turn(8, session="other"), Mode.SESSION_START)
        await tx.insert_turn(turn(10, time_us=T0 + 9), Mode.IN_SESSION)
    async with store.read(*who) as tx:
        assert [t.turn_id for t in await tx.session_turns("s1", 4)] == [
            "turn-5",
            "turn-7",
            "turn-10",
            "turn-9",
        ]
        assert [t.turn_id for t in await tx.session_turns("s1", 2, user_only=True)] == [
            "turn-10",
            "turn-9",
        ]
        assert [t.role for t in await tx.session_turns("s1", 10)].count(Role.ASSISTANT) == 1


async def test_a_failed_transaction_leaves_nothing(store: ThreadStore) -> None:
    who = user()
    with pytest.raises(RuntimeError):
        async with store.write(*who) as tx:
            await tx.insert_turn(turn(1), Mode.SESSION_START)
            raise RuntimeError("boom")
    async with store.read(*who) as tx:
        assert await tx.turn_mode("turn-1") is None


async def test_activity_and_sessions_upsert(store: ThreadStore) -> None:
    who = user()
    async with store.write(*who) as tx:
        assert await tx.user_activity() is None
        await tx.save_activity(UserActivity(T0, "s1"))
        await tx.save_activity(UserActivity(T0 + 5, "s2"))
        await tx.save_session(SessionRow("s1", T0, T0, 1, "", False))
        await tx.save_session(SessionRow("s1", T0, T0 + 3, 2, "Summary.", True))
        await tx.save_session(SessionRow("s2", T0 + 5, T0 + 5, 1, "", False))
    async with store.read(*who) as tx:
        assert await tx.user_activity() == UserActivity(T0 + 5, "s2")
        assert await tx.session("s1") == SessionRow("s1", T0, T0 + 3, 2, "Summary.", True)
        assert [s.session_id for s in await tx.recent_sessions(5)] == ["s2", "s1"]


async def test_loops_open_close_and_list_newest_first(store: ThreadStore) -> None:
    who = user()
    first = Loop("loop-1", "s1", "Book the dentist", ("book", "dentist"), 1, T0, "turn-1")
    second = Loop("loop-2", "s2", "Call Sarah", ("call", "sarah"), 2, T0 + 1, "turn-2")
    async with store.write(*who) as tx:
        await tx.save_loops([first, second])
        await tx.save_loops([Loop(**{**first.__dict__, "closed_by_turn_id": "turn-3"})])
    async with store.read(*who) as tx:
        assert await tx.open_loops(10) == [second]
        assert [loop.closed_by_turn_id for loop in await tx.thread_loops("s1")] == ["turn-3"]


async def test_graph_weights_add_up_across_turns_and_threads(store: ThreadStore) -> None:
    who = user()
    nodes = [GraphNode("entity:sarah", "Sarah"), GraphNode("entity:tom", "Tom")]
    pairs = [("entity:sarah", "entity:tom"), ("entity:tom", "entity:sarah")]
    async with store.write(*who) as tx:
        await tx.add_graph("s1", nodes, pairs)
        await tx.add_graph("s1", nodes, pairs)
        await tx.add_graph("s2", nodes, pairs)
    async with store.read(*who) as tx:
        edges = await tx.neighbours(["entity:sarah"])
        assert [(e.to_node_id, e.weight) for e in edges] == [("entity:tom", 3)]
        assert await tx.node_labels(["entity:tom", "entity:nobody"]) == {"entity:tom": "Tom"}


async def test_a_digest_keeps_its_decisions_and_content_updates_replace_them(
    store: ThreadStore,
) -> None:
    who = user()
    decided = Digest(**{**digest("s1").__dict__, "last_decisions": ("We'll go with oak.",)})
    async with store.write(*who) as tx:
        await tx.save_digest(decided)
        first = await tx.digest("s1")
        await tx.save_digest(Digest(**{**digest("s1").__dict__, "summary": "Newer."}))
    async with store.read(*who) as tx:
        stored = await tx.digest("s1")
    assert first is not None and first.last_decisions == ("We'll go with oak.",)
    assert stored is not None and (stored.summary, stored.last_decisions) == ("Newer.", ())
    assert stored.key_entities == ("Sarah",) and stored.evidence_turn_ids == ("turn-1",)


async def test_topic_threads_keep_their_sessions_pin_and_uses(store: ThreadStore) -> None:
    who = user()
    async with store.write(*who) as tx:
        for session in ("s1", "s2", "s3"):
            await tx.save_digest(digest(session))
        await tx.join_topic("s1", "s1")
        await tx.join_topic("s2", "s1")
        await tx.join_topic("s3", "s3")
        await tx.mark_topic("s1", True, None)
        await tx.mark_topic("s1", None, T0 + 50)
        # A use never moves the last use backwards.
        await tx.mark_topic("s1", None, T0 + 10)
        await tx.join_topic("s2", "s1")
    async with store.read(*who) as tx:
        assert await tx.topic_members() == {"s1": "s1", "s2": "s1", "s3": "s3"}
        rows = await tx.topic_rows()
    assert (rows["s1"].pinned, rows["s1"].use_count, rows["s1"].last_use_us) == (True, 2, T0 + 50)
    assert (rows["s3"].pinned, rows["s3"].use_count) == (False, 0)
    async with store.write(*who) as tx:
        # The founding session goes; its thread stays while another session belongs to it.
        assert await tx.forget_thread("s1")
        assert await tx.topic_members() == {"s2": "s1", "s3": "s3"}
        assert set(await tx.topic_rows()) == {"s1", "s3"}
        assert await tx.forget_thread("s2")
        assert set(await tx.topic_rows()) == {"s3"}
    async with store.read(*user()) as tx:
        assert await tx.topic_members() == {} and await tx.topic_rows() == {}


async def test_forget_thread_removes_everything_of_that_thread_only(store: ThreadStore) -> None:
    who = user()
    async with store.write(*who) as tx:
        await tx.insert_turn(turn(1, "s1"), Mode.SESSION_START)
        await tx.insert_turn(turn(2, "s2"), Mode.SESSION_START)
        await tx.save_session(SessionRow("s1", T0, T0, 1, "Summary.", False))
        await tx.save_loops(
            [Loop("loop-1", "s1", "Call Sarah", ("call", "sarah"), 1, T0, "turn-1")]
        )
        await tx.add_graph("s1", [GraphNode("entity:sarah", "Sarah")], [])
        await tx.save_digest(digest("s1"))
        assert await tx.forget_thread("s1")
        assert not await tx.forget_thread("s1")
    async with store.read(*who) as tx:
        assert await tx.digest("s1") is None and await tx.session("s1") is None
        assert await tx.open_loops(10) == [] and await tx.node_labels(["entity:sarah"]) == {}
        assert [t.turn_id for t in await tx.turns_of(["turn-1", "turn-2"])] == ["turn-2"]


async def test_another_user_sees_nothing(store: ThreadStore) -> None:
    owner, other = user(), user()
    async with store.write(*owner) as tx:
        await tx.insert_turn(turn(1), Mode.SESSION_START)
        await tx.save_activity(UserActivity(T0, "s1"))
        await tx.save_digest(digest("s1"))
        await tx.add_graph("s1", [GraphNode("entity:sarah", "Sarah")], [])
    async with store.read(*other) as tx:
        assert await tx.turn_mode("turn-1") is None and await tx.user_activity() is None
        assert await tx.session_turns("s1", 6) == [] and await tx.turns_of(["turn-1"]) == []
        assert await tx.digests() == [] and await tx.node_labels(["entity:sarah"]) == {}
    async with store.write(*other) as tx:
        assert not await tx.forget_thread("s1")


async def test_every_write_changes_the_users_data_version_and_a_rollback_does_not(
    store: ThreadStore,
) -> None:
    who, other = user(), user()
    seen = set()
    async with store.read(*who) as tx:
        assert await tx.data_version() == 0
    for n in range(1, 4):
        async with store.write(*who) as tx:
            await tx.insert_turn(turn(n), Mode.SESSION_START)
        async with store.read(*who) as tx:
            seen.add(await tx.data_version())
    async with store.write(*who) as tx:
        # A write that changes nothing still changes it.
        assert await tx.turn_mode("turn-1") == Mode.SESSION_START
    async with store.read(*who) as tx:
        last = await tx.data_version()
    assert 0 not in seen | {last} and len(seen | {last}) == 4
    with pytest.raises(RuntimeError):
        async with store.write(*who) as tx:
            await tx.insert_turn(turn(9), Mode.IN_SESSION)
            raise RuntimeError("rolled back")
    async with store.read(*who) as tx:
        assert await tx.data_version() == last
    async with store.write(*who) as tx:
        await tx.forget_user()
    async with store.read(*who) as tx:
        # The row goes with the user (it named them); a later write gets a new number.
        assert await tx.data_version() == 0
    async with store.write(*who) as tx:
        await tx.insert_turn(turn(10), Mode.SESSION_START)
    async with store.read(*who) as tx:
        assert await tx.data_version() not in seen | {last, 0}
    async with store.read(*other) as tx:
        assert await tx.data_version() == 0
