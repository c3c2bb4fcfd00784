"""Turn exposure in the ThreadStore over real backends (SQLite alone, PostgreSQL with the Redis
buffer): sensitive turns and turns restricted later never reach a rolling summary, digest,
episode, bridge, loop, graph node or (INTERNAL_ONLY) working memory, and their index copies go."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.common.v1 import memory_pb2
from memmesh.engines.thread_store.adapters.ranker_index import INDEX_REMOVE
from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.adapters.turn_buffer import RedisTurnBuffer
from memmesh.engines.thread_store.domain.model import Exposure, Role, Turn
from memmesh.engines.thread_store.domain.sessions import DEFAULT_SESSION_GAP_US
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.outbox import Effect
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.runtime.timeconv import micros_of
from memmesh.storage.sql import Dialect, PostgresDatabase, SqliteDatabase

T0 = 1_767_225_600_000_000
MINUTE = 60_000_000


@dataclass
class RecordingIndex:
    """An IndexFeed that records what the writes queued for the index to remove and index."""

    removed: list[str] = field(default_factory=list)
    turns: list[memory_pb2.Turn] = field(default_factory=list)
    digests: list[memory_pb2.Digest] = field(default_factory=list)
    # The time each first attempt was given, by the first effect's kind.
    timeouts: list[tuple[str, float | None]] = field(default_factory=list)

    async def first_attempt(
        self,
        tenant_id: str,
        user_id: str,
        effects: Sequence[Effect],
        timeout_s: float | None = None,
    ) -> None:
        self.timeouts.append((effects[0].kind, timeout_s))
        for effect in effects:
            if effect.kind == INDEX_REMOVE:
                self.removed.extend(ranker_pb.RemoveRequest.FromString(effect.payload).doc_ids)
            else:
                for document in ranker_pb.UpsertRequest.FromString(effect.payload).documents:
                    if document.HasField("turn"):
                        self.turns.append(document.turn)
                    else:
                        self.digests.append(document.digest)

    def clear(self) -> None:
        self.removed.clear()
        self.turns.clear()
        self.digests.clear()


@dataclass
class Setup:
    service: ThreadStoreUseCases
    index: RecordingIndex
    store: SqlThreadStore

    async def archived(self, who: tuple[str, str], turn_ids: list[str]) -> dict[str, Exposure]:
        """The archived exposure of each turn."""
        async with self.store.read(*who) as tx:
            return {t.turn_id: t.exposure for t in await tx.turns_of(turn_ids)}


ERASURE_ATTEMPT_S = 1.25


@pytest_asyncio.fixture(params=["sqlite", "postgres+redis"])
async def setup(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Setup]:
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
    index = RecordingIndex()
    service = ThreadStoreUseCases(
        store, buffer, DEFAULT_SESSION_GAP_US, 6, index, erasure_attempt_s=ERASURE_ATTEMPT_S
    )
    yield Setup(service, index, store)
    if buffer is not None:
        await buffer.close()
    await store.close()


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


def turn(index: int, text: str, session: str = "s1", role: Role = Role.USER) -> Turn:
    return Turn(f"turn-{index}", session, role, text, T0 + index * MINUTE)


async def everything_told(
    service: ThreadStoreUseCases, who: tuple[str, str], session: str, *, voice: bool
) -> str:
    """Every transcript-derived text the ThreadStore hands out for a session, as a voice or a
    text channel could see it (SAFE_TO_TEXT turns only on text)."""
    memory = await service.working_memory(*who, session, 0)
    allowed = Exposure.SAFE_TO_SPEAK if voice else Exposure.SAFE_TO_TEXT
    parts = [t.text for t in memory.turns if t.exposure <= allowed]
    parts += [memory.rolling_summary, *(loop.text for loop in memory.active_loops)]
    resumed = await service.resume(*who, "s-next", T0 + 600 * MINUTE)
    parts += [resumed.episode_bridge]
    for digest in resumed.candidates:
        parts += [
            digest.title,
            digest.summary,
            digest.next_step,
            *digest.key_entities,
            *digest.unresolved_questions,
        ]
    for episode in await service.thread_episodes(*who, session):
        parts += [episode.title, episode.summary, *episode.key_entities]
    parts += [
        node.label
        for node in (await service.expand(*who, ["entity:boston", "entity:anna"], 2, 5)).nodes
    ]
    return "\n".join(parts)


async def say_boston(service: ThreadStoreUseCases, who: tuple[str, str]) -> None:
    await service.append_turn(*who, turn(0, "I live in Boston with my wife Anna."))
    await service.append_turn(*who, turn(1, "That sounds lovely.", role=Role.ASSISTANT))
    await service.append_turn(*who, turn(2, "I need to book the Boston movers tomorrow."))
    await service.append_turn(*who, turn(3, "I love jazz and long walks in the park."))


async def test_a_credential_said_in_conversation_is_archived_internal_only_and_never_handed_out(
    setup: Setup,
) -> None:
    service, who = setup.service, user()
    await service.append_turn(*who, turn(0, "I love jazz and long walks in the park."))
    appended = await service.append_turn(
        *who, turn(1, "My bank PIN is 4921, I need to remember it tomorrow.")
    )
    assert appended.exposure == Exposure.INTERNAL_ONLY and appended.loops_opened == ()
    assert (
        await service.append_turn(*who, turn(1, "My bank PIN is 4921."))
    ).exposure == Exposure.INTERNAL_ONLY
    await service.close_session(*who, "s1")
    for voice in (True, False):
        told = await everything_told(service, who, "s1", voice=voice)
        assert "4921" not in told and "jazz" in told
    archived = await setup.archived(who, ["turn-0", "turn-1"])
    assert archived == {"turn-0": Exposure.SAFE_TO_SPEAK, "turn-1": Exposure.INTERNAL_ONLY}


async def test_a_health_turn_is_written_not_spoken(setup: Setup) -> None:
    service, who = setup.service, user()
    appended = await service.append_turn(
        *who, turn(0, "I have diabetes and I need to see the nurse.")
    )
    assert appended.exposure == Exposure.SAFE_TO_TEXT
    memory = await service.working_memory(*who, "s1", 0)
    assert [(t.turn_id, t.exposure) for t in memory.turns] == [("turn-0", Exposure.SAFE_TO_TEXT)]
    await service.close_session(*who, "s1")
    assert "diabetes" not in await everything_told(service, who, "s1", voice=True)


async def test_restricting_turns_rebuilds_everything_they_fed_and_replaces_their_index_copies(
    setup: Setup,
) -> None:
    service, who = setup.service, user()
    await say_boston(service, who)
    await service.close_session(*who, "s1")
    assert "Boston" in await everything_told(service, who, "s1", voice=True)
    assert {t.turn_id for t in setup.index.turns} == {"turn-0", "turn-1", "turn-2", "turn-3"}
    setup.index.clear()

    raised = await service.restrict_turns(
        *who, ["turn-0", "turn-2", "unknown"], Exposure.INTERNAL_ONLY
    )
    assert raised == 2
    for voice in (True, False):
        told = await everything_told(service, who, "s1", voice=voice)
        assert "Boston" not in told and "Anna" not in told and "movers" not in told
        assert "jazz" in told
    memory = await service.working_memory(*who, "s1", 0)
    assert [t.turn_id for t in memory.turns] == ["turn-1", "turn-3"]
    assert {"turn-0", "turn-2", "s1"} <= set(setup.index.removed)
    assert setup.index.turns == []
    rebuilt = [d for d in setup.index.digests if not d.episode_id]
    assert [d.thread_id for d in rebuilt] == ["s1"] and "Boston" not in rebuilt[0].summary
    assert micros_of(rebuilt[0].update_time) == T0 + 3 * MINUTE
    assert all("Boston" not in d.summary for d in setup.index.digests)

    # Idempotent, and never looser.
    setup.index.removed.clear()
    assert await service.restrict_turns(*who, ["turn-0"], Exposure.INTERNAL_ONLY) == 0
    assert await service.restrict_turns(*who, ["turn-0"], Exposure.SAFE_TO_TEXT) == 0
    assert setup.index.removed == []
    archived = await setup.archived(who, ["turn-0"])
    assert archived["turn-0"] == Exposure.INTERNAL_ONLY


async def test_a_turn_restricted_to_text_stays_in_working_memory_for_text_only(
    setup: Setup,
) -> None:
    service, who = setup.service, user()
    await say_boston(service, who)
    setup.index.clear()
    assert await service.restrict_turns(*who, ["turn-0"], Exposure.SAFE_TO_TEXT) == 1
    memory = await service.working_memory(*who, "s1", 0)
    assert memory.turns[0].turn_id == "turn-0" and memory.turns[0].exposure == Exposure.SAFE_TO_TEXT
    assert "Anna" not in memory.rolling_summary and "jazz" in memory.rolling_summary
    assert [(t.turn_id, t.exposure) for t in setup.index.turns] == [
        ("turn-0", memory_pb2.EXPOSURE_SAFE_TO_TEXT)
    ]
    assert "Anna" not in await everything_told(service, who, "s1", voice=True)
    assert "Anna" in await everything_told(service, who, "s1", voice=False)


async def test_a_caller_may_archive_a_turn_stricter_but_never_looser(setup: Setup) -> None:
    service, who = setup.service, user()
    stricter = Turn("turn-0", "s1", Role.USER, "I love jazz.", T0, Exposure.SAFE_TO_TEXT)
    looser = Turn(
        "turn-1", "s1", Role.USER, "My password is hunter2.", T0 + MINUTE, Exposure.SAFE_TO_SPEAK
    )
    assert (await service.append_turn(*who, stricter)).exposure == Exposure.SAFE_TO_TEXT
    assert (await service.append_turn(*who, looser)).exposure == Exposure.INTERNAL_ONLY


async def test_an_erasure_gives_its_index_removal_the_longer_first_attempt(setup: Setup) -> None:
    who = user()
    await setup.service.append_turn(*who, turn(0, "My sister lives in Porto. I like tea."))
    await setup.service.redact_turns(*who, ["turn-0"], ["Porto"])
    await setup.service.forget_session(*who, "s1")
    await setup.service.forget_user(*who)
    # An append's first attempt is the short one; each erasure waits longer for the index,
    # so its removal is in force when it answers whenever the ranker answers in time.
    assert setup.index.timeouts == [
        ("index_upsert", None),
        ("index_remove", ERASURE_ATTEMPT_S),
        ("index_remove", ERASURE_ATTEMPT_S),
        ("index_forget_user", ERASURE_ATTEMPT_S),
    ]
