"""Topic threads (seed 001 §2.18) on SQLite and PostgreSQL: the replayed conversations of
fixtures/continuity/topic_threads.json, where one topic spans three sessions over two weeks
and another topic sits between them, become one thread with its decisions and a thread of
its own; the thread is resumed, pinned and used as one, and forgetting one of its sessions
takes that session's part out of it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.domain.graph import node_type
from memmesh.engines.thread_store.domain.model import Digest, Expansion, Role, Turn
from memmesh.engines.thread_store.domain.sessions import DEFAULT_SESSION_GAP_US
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.storage.sql import Dialect, PostgresDatabase, SqliteDatabase
from memmesh.testing.scopes import new_scope

FIXTURE = Path(__file__).parents[3] / "fixtures" / "continuity" / "topic_threads.json"
T0 = 1_767_225_600_000_000
MINUTE = 60_000_000
DAY = 24 * 60 * MINUTE


def conversations() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FIXTURE.read_text())
    return loaded


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def threads(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ThreadStoreUseCases]:
    if request.param == "sqlite":
        database = SqliteDatabase.open(tmp_path / "threads.sqlite3", migrations(Dialect.SQLITE))
    else:
        database = await PostgresDatabase.open(
            request.getfixturevalue("postgres_url"), "thread_store", migrations(Dialect.POSTGRES)
        )
    store = SqlThreadStore(database)
    yield ThreadStoreUseCases(store, None, DEFAULT_SESSION_GAP_US, 6)
    await store.close()


async def replay(
    threads: ThreadStoreUseCases, who: tuple[str, str], close_last: bool = True
) -> int:
    """Say every session's turns on its day; close each session (the last one only when
    `close_last`); the time just after the last turn."""
    sessions = conversations()["sessions"]
    at = T0
    for number, session in enumerate(sessions):
        at = T0 + session["day"] * DAY
        for index, text in enumerate(session["turns"]):
            turn_id = f"{session['session_id']}-{index}"
            turn = Turn(turn_id, session["session_id"], Role.USER, text, at)
            await threads.append_turn(*who, turn)
            at += MINUTE
        if close_last or number < len(sessions) - 1:
            await threads.close_session(*who, session["session_id"])
    return at


def user() -> tuple[str, str]:
    scope = new_scope()
    return scope.tenant_id, scope.user_id


def by_sessions(candidates: tuple[Digest, ...]) -> dict[tuple[str, ...], Digest]:
    return {candidate.session_ids: candidate for candidate in candidates}


@pytest.mark.parametrize("close_last", [True, False])
async def test_a_topic_over_three_sessions_becomes_one_thread_with_its_decisions(
    threads: ThreadStoreUseCases, close_last: bool
) -> None:
    who = user()
    expected = conversations()["expected"]
    end = await replay(threads, who, close_last)
    # A new session two hours later; an unclosed last session joins its thread as it would
    # on its close.
    resumed = await threads.resume(*who, "back", end + 120 * MINUTE)
    found = by_sessions(resumed.candidates)
    topic = found[tuple(expected["topic_sessions"])]
    assert set(found) == {tuple(expected["topic_sessions"]), tuple(expected["alone"])}
    assert resumed.candidates[0] is topic and resumed.tier == "HOT"
    assert topic.thread_id == expected["topic_sessions"][0]
    for word in expected["topic_words"]:
        assert word in topic.title.lower()
    # Every session's decision, newest first.
    decided = [
        next(i for i, d in enumerate(topic.last_decisions) if phrase in d.lower())
        for phrase in expected["decisions"]
    ]
    assert decided == sorted(decided)
    # Where we left off: 1-3 bullets from its structured fields, the newest next step first.
    assert 1 <= len(resumed.left_off) <= 3
    assert resumed.left_off[0].startswith("Next step:") and "backsplash" in resumed.left_off[0]
    assert "permit" in " ".join(topic.unresolved_questions).lower()
    evidence = set(topic.evidence_turn_ids)
    assert {e.split("-")[0] for e in evidence} == {"kitchen"}


async def test_the_thread_is_pinned_used_and_resumed_as_one(
    threads: ThreadStoreUseCases,
) -> None:
    who = user()
    expected = conversations()["expected"]
    end = await replay(threads, who)
    # Any of its sessions names the thread.
    assert await threads.pin_thread(*who, "kitchen-2", True)
    used = await threads.record_use(*who, "kitchen-3", end)
    assert used is not None and used.thread_id == "kitchen-1"
    assert (used.pinned, used.use_count) == (True, 1)
    found = await threads.resume_thread(*who, expected["resume_topic"], "back", end + DAY)
    assert found is not None
    digest, left_off = found
    assert digest.session_ids == tuple(expected["topic_sessions"]) and digest.use_count == 2
    assert left_off and "backsplash" in left_off[0]
    asked = await threads.resumed_thread(*who, digest.thread_id, end + DAY)
    assert asked.candidates == (digest,) and asked.left_off == left_off
    assert not await threads.pin_thread(*who, "never-said", True)


async def test_forgetting_one_session_takes_its_part_out_of_the_thread(
    threads: ThreadStoreUseCases,
) -> None:
    who = user()
    end = await replay(threads, who)
    await threads.forget_session(*who, "kitchen-2")
    resumed = await threads.resume(*who, "back", end + MINUTE)
    topic = resumed.candidates[0]
    assert topic.session_ids == ("kitchen-1", "kitchen-3")
    said = " ".join((topic.summary, *topic.last_decisions, *topic.unresolved_questions)).lower()
    assert "sink" not in said and "permit" not in said
    # The founding session goes too: the thread keeps its id while a session is left.
    await threads.forget_session(*who, "kitchen-1")
    resumed = await threads.resume(*who, "back", end + MINUTE)
    assert by_sessions(resumed.candidates)[("kitchen-3",)].thread_id == "kitchen-1"


async def test_the_graph_links_entities_threads_decisions_and_what_waits_on_what(
    threads: ThreadStoreUseCases,
) -> None:
    who = user()
    expected = conversations()["expected"]
    await replay(threads, who)
    walked = await threads.expand(*who, ["entity:marco"], depth=2, fan_out=10)
    types = {node.node_id: node_type(node.node_id) for node in walked.nodes}
    thread = "thread:" + expected["topic_sessions"][0]
    assert types[thread] == "thread" and "kitchen" in labels_of(walked)[thread].lower()
    labels = {node.node_id: node.label for node in walked.nodes}
    decided = [labels[n] for n, kind in types.items() if kind == "decision"]
    for phrase in expected["decisions"]:
        assert any(phrase in label.lower() for label in decided), (phrase, decided)
    reached = {(e.from_node_id, e.to_node_id, e.edge_type) for e in walked.edges}
    assert ("entity:marco", thread, "mentioned_with") in reached
    assert all(kind != "thread" or node == thread for node, kind in types.items())
    dependency = expected["dependency"]
    waits = await threads.expand(*who, [dependency["waiting"]], depth=1, fan_out=5)
    assert (dependency["waiting"], dependency["awaited"], dependency["edge_type"]) in {
        (e.from_node_id, e.to_node_id, e.edge_type) for e in waits.edges
    }
    # The turn context's entities stay people and things: no thread, no decision.
    context = await threads.turn_context(
        *who, "back", T0 + 20 * DAY, 0, None, entity_node_ids=["entity:marco"]
    )
    assert context.entities is not None
    assert {node_type(n.node_id) for n in context.entities.nodes} == {"entity"}
    # Forgetting a session takes the links it stated.
    await threads.forget_session(*who, "kitchen-2")
    gone = await threads.expand(*who, [dependency["waiting"]], depth=1, fan_out=5)
    assert not gone.edges
    # A walk reaching the thread reads its title from its sessions as they are now.
    after = await threads.expand(*who, ["entity:marco"], depth=1, fan_out=10)
    label = {n.node_id: n.label for n in after.nodes}["thread:" + expected["topic_sessions"][0]]
    assert label and "kitchen" in label.lower()


def labels_of(expansion: Expansion) -> dict[str, str]:
    return {node.node_id: node.label for node in expansion.nodes}


async def test_threads_past_their_retention_go_unless_pinned_or_unresolved_for_90_days(
    tmp_path: Path,
) -> None:
    store = SqlThreadStore(
        SqliteDatabase.open(tmp_path / "retention.sqlite3", migrations(Dialect.SQLITE))
    )
    # This tenant keeps threads 30 days after their last use.
    threads = ThreadStoreUseCases(
        store, None, DEFAULT_SESSION_GAP_US, 6, retention=lambda tenant: 30 * DAY
    )
    who = user()
    talks = {
        "settled": "We booked the Lisbon flat for June, all done.",
        "open": "Which plumber should fix the boiler before winter?",
        "kept": "Grandma's apple pie recipe uses cinnamon and lemon zest.",
        "new": "The garden needs new tulip bulbs this autumn.",
    }
    for day, session in ((0, "settled"), (0, "open"), (0, "kept")):
        await threads.append_turn(
            *who, Turn(f"{session}-1", session, Role.USER, talks[session], T0 + day * DAY)
        )
        await threads.close_session(*who, session)
    assert await threads.pin_thread(*who, "kept", True)

    async def close_on(day: int, session: str) -> set[str]:
        turn = Turn(f"{session}-1", session, Role.USER, talks["new"], T0 + day * DAY)
        await threads.append_turn(*who, turn)
        await threads.close_session(*who, session)
        resumed = await threads.resume(*who, "later", T0 + day * DAY + MINUTE)
        return {c.thread_id for c in resumed.candidates}

    # Day 40: the settled thread is past its 30 days; the open one stays up to 90 days.
    assert await close_on(40, "s40") == {"open", "kept", "s40"}
    async with store.read(*who) as tx:
        assert await tx.digest("settled") is None and await tx.thread_episodes("settled") == []
        # The archive keeps the turns; only the thread went.
        assert [t.turn_id for t in await tx.turns_of(["settled-1"])] == ["settled-1"]
    # Day 100: the open one is past 90 days too; the pinned one never goes.
    assert "open" not in await close_on(100, "s100")
    assert "kept" in await close_on(101, "s101")
    await store.close()


DECIDED = tuple(
    f"We decided to paint room {n} {colour}."
    for n, colour in enumerate(("blue", "green", "grey", "white", "yellow", "red", "black"), 1)
)


async def test_remember_everything_gives_richer_digests(threads: ThreadStoreUseCases) -> None:
    who = user()
    assert await threads.set_retention_mode(*who, True)
    assert not await threads.set_retention_mode(*who, True)
    for index, text in enumerate(DECIDED):
        await threads.append_turn(*who, Turn(f"p{index}", "paint", Role.USER, text, T0 + index))
    closed = await threads.close_session(*who, "paint")
    assert closed is not None and len(closed.digest.last_decisions) == len(DECIDED)
    thread = (await threads.resume(*who, "later", T0 + DAY)).candidates[0]
    assert len(thread.last_decisions) == len(DECIDED)
    # The default mode keeps its usual bounds.
    other = user()
    for index, text in enumerate(DECIDED):
        await threads.append_turn(*other, Turn(f"q{index}", "paint", Role.USER, text, T0 + index))
    default = await threads.close_session(*other, "paint")
    assert default is not None and len(default.digest.last_decisions) == 5
