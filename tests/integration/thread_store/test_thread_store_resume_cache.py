"""A repeated session start's resume is served from what the process kept of the user's rows
(on SQLite and PostgreSQL): it answers exactly what a process keeping nothing reads, at any
time, and every write and erasure of the user (through this process or another sharing the
store) is in the next answer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.domain import topics
from memmesh.engines.thread_store.domain.model import Exposure, Resumed, Role, Turn
from memmesh.engines.thread_store.domain.resume import DAY_US
from memmesh.engines.thread_store.domain.sessions import DEFAULT_SESSION_GAP_US
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.storage.sql import Database, Dialect, PostgresDatabase, SqliteDatabase
from memmesh.testing.scopes import new_scope

T0 = 1_767_225_600_000_000
MINUTE = 60_000_000
SESSIONS = {
    "trip": [
        "Sarah and I decided to book the Lisbon flights for May.",
        "Should we stay in Alfama or near the river?",
        "I need to renew my passport before the Lisbon trip.",
    ],
    "piano": [
        "Kwame is teaching me the Chopin nocturne on the piano.",
        "We decided to practise the left hand slowly every morning.",
        "Is the old piano worth tuning or should I buy a new one?",
    ],
    "garden": [
        "The tomatoes in the garden need more sun this year.",
        "Marta says the basil should go next to the tomatoes.",
        "I have to build the raised bed before Porto in June.",
        "Then Priya came by. Then Jonas called. Then Tomasz waved. Then Aisha helped. "
        "Then Anna baked bread. Then Boris dug the bed.",
    ],
}
# The last session is never closed: a session start digests it on the fly.
OPEN = "garden"
END = T0 + 3 * DAY_US


@dataclass
class Stores:
    """One user's ThreadStore as two processes sharing the store see it (each keeping what
    its resumes read), and as a process keeping nothing does."""

    kept: ThreadStoreUseCases
    other: ThreadStoreUseCases
    fresh: ThreadStoreUseCases
    who: tuple[str, str]


async def _database(request: pytest.FixtureRequest, path: Path) -> Database:
    if request.param == "sqlite":
        return SqliteDatabase.open(path, migrations(Dialect.SQLITE))
    return await PostgresDatabase.open(
        request.getfixturevalue("postgres_url"), "thread_store", migrations(Dialect.POSTGRES)
    )


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    # Each its own connection (pool) on the same file or schema, as separate processes.
    opened = [
        SqlThreadStore(await _database(request, tmp_path / "threads.sqlite3")) for _ in range(3)
    ]
    kept, other, fresh = (
        ThreadStoreUseCases(store, None, DEFAULT_SESSION_GAP_US, 6, kept_resume_users=kept)
        for store, kept in zip(opened, (16, 16, 0), strict=True)
    )
    scope = new_scope()
    who = (scope.tenant_id, scope.user_id)
    for day, (session_id, texts) in enumerate(SESSIONS.items()):
        for index, text in enumerate(texts):
            at = T0 + day * DAY_US + index * MINUTE
            await kept.append_turn(
                *who, Turn(f"{session_id}-{index}", session_id, Role.USER, text, at)
            )
        if session_id != OPEN:
            await kept.close_session(*who, session_id)
    yield Stores(kept, other, fresh, who)
    for use_cases, store in zip((kept, other, fresh), opened, strict=True):
        await use_cases.close()
        await store.close()


async def both(stores: Stores, session_id: str = "next", now_us: int = END) -> Resumed:
    """The kept process's answer, asserted equal to what a process keeping nothing reads."""
    kept = await stores.kept.resume(*stores.who, session_id, now_us)
    assert kept == await stores.fresh.resume(*stores.who, session_id, now_us)
    return kept


async def test_a_repeated_session_start_answers_what_a_process_keeping_nothing_reads(
    stores: Stores,
) -> None:
    first = await both(stores)
    assert first.candidates and first.episode_bridge and first.left_off
    assert await both(stores) == first
    # The time moves the tiers and the unresolved window: computed on every call.
    tiers = set()
    for days in (0, 2, 10, 40, 100, 400):
        tiers.add((await both(stores, now_us=END + days * DAY_US)).tier)
        assert (await both(stores, now_us=END + days * DAY_US)).tier in tiers
    assert tiers == {"HOT", "WARM", "COLD"}
    # Another opening session, or one of the user's own sessions, as the one starting.
    for session_id in ("another", OPEN, "trip", "piano"):
        await both(stores, session_id)
        await both(stores, session_id)


async def _new_turn(stores: Stores) -> None:
    said = "Marta thinks we should plant peppers beside the tomatoes too."
    turn = Turn("garden-9", OPEN, Role.USER, said, END - DAY_US + 10 * MINUTE)
    await stores.other.append_turn(*stores.who, turn)


async def _redact(stores: Stores) -> None:
    await stores.other.redact_turns(*stores.who, ["garden-2"], ["Porto"])


async def _forget_session(stores: Stores) -> None:
    await stores.other.forget_session(*stores.who, OPEN)


async def _close(stores: Stores) -> None:
    await stores.other.close_session(*stores.who, OPEN)


async def _pin(stores: Stores) -> None:
    assert await stores.other.pin_thread(*stores.who, "trip", True)


async def _use(stores: Stores) -> None:
    assert await stores.other.record_use(*stores.who, "piano", END) is not None


async def _remember_everything(stores: Stores) -> None:
    assert await stores.other.set_retention_mode(*stores.who, True)


async def _restrict(stores: Stores) -> None:
    assert await stores.other.restrict_turns(*stores.who, ["garden-1"], Exposure.INTERNAL_ONLY)


async def _forget_user(stores: Stores) -> None:
    await stores.other.forget_user(*stores.who)


async def _forget_trip(stores: Stores) -> None:
    await stores.other.forget_session(*stores.who, "trip")


async def _redact_closed(stores: Stores) -> None:
    await stores.other.redact_turns(*stores.who, ["piano-0"], ["Chopin"])


WRITES: dict[str, Callable[[Stores], Awaitable[None]]] = {
    "a new turn in the unclosed previous session": _new_turn,
    "a redaction in the previous session": _redact,
    "a redaction in a closed session": _redact_closed,
    "forgetting the previous session": _forget_session,
    "forgetting a closed session": _forget_trip,
    "closing the previous session": _close,
    "a pin": _pin,
    "a use": _use,
    "remembering everything": _remember_everything,
    "a restriction": _restrict,
    "forgetting the user": _forget_user,
}
# Writes whose answer may be the one before (closing digests the session as it was read).
SAME_ANSWER: set[str] = set()


@pytest.mark.parametrize("write", list(WRITES))
async def test_every_write_and_erasure_is_in_the_next_answer_of_every_process(
    stores: Stores, write: str
) -> None:
    before = await both(stores)
    assert await both(stores) == before
    await WRITES[write](stores)
    after = await both(stores)
    if write not in SAME_ANSWER:
        assert after != before
    assert await both(stores) == after
    # The process that wrote answers the same.
    assert await stores.other.resume(*stores.who, "next", END) == after


async def test_an_erased_word_is_in_no_answer_after_its_redaction(stores: Stores) -> None:
    assert "Porto" in repr(await both(stores))
    await stores.kept.redact_turns(*stores.who, ["garden-2"], ["Porto"])
    assert "Porto" not in repr(await both(stores))
    await stores.other.redact_turns(*stores.who, ["trip-0"], ["Sarah"])
    assert "Sarah" not in repr(await both(stores, now_us=END + 40 * DAY_US))


ERASURES: dict[str, tuple[Callable[[Stores], Awaitable[None]], str]] = {
    "a redaction": (lambda s: s.kept.redact_turns(*s.who, ["trip-0"], ["Sarah"]), "Sarah"),
    "forgetting a session": (lambda s: s.kept.forget_session(*s.who, "piano"), "Chopin"),
    "a restriction": (
        lambda s: s.kept.restrict_turns(*s.who, ["piano-0"], Exposure.INTERNAL_ONLY),
        "Chopin",
    ),
    "forgetting the user": (lambda s: s.kept.forget_user(*s.who), "Lisbon"),
}


@pytest.mark.parametrize("erasure", list(ERASURES))
async def test_an_erasure_leaves_its_words_in_no_cache_of_the_process(
    stores: Stores, erasure: str
) -> None:
    erase, word = ERASURES[erasure]
    for days in (0, 40):  # HOT and WARM answers merge and read the threads' topic words
        await both(stores, now_us=END + days * DAY_US)
    assert topics._merge.cache_info().currsize + topics.topic_stems.cache_info().currsize > 0
    await erase(stores)
    # What the merge and topic-word caches hold (keyed by content) went with the erasure.
    assert topics._merge.cache_info().currsize == 0
    assert topics.topic_stems.cache_info().currsize == 0
    assert word not in repr(await both(stores))
