"""Ingest's use case with fake peers: acknowledged once archived, derived effects through
the outbox (first attempt before the answer), profile fill as a follow-up of extraction
(one blind fill_empty_profile change: Current State decides what is still empty)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.adapters.sql_store import migrations_for
from memmesh.engines.gateway.effects import EXTRACT, FILL_PROFILE, EffectHandlers
from memmesh.engines.gateway.ingest import IngestHandler
from memmesh.errors import DependencyFailed
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.outbox import Effect, Outbox, RetryPolicy
from memmesh.runtime.timeconv import timestamp_of
from memmesh.storage.sql import Dialect, SqliteDatabase
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

SCOPE = scope_pb2.UserScope(tenant_id="t", user_id="u")
NOW_US = 1_767_225_600 * 1_000_000


class FakeThreads:
    def __init__(self) -> None:
        self.down = False
        self.turns: list[str] = []

    async def append_turn(
        self, request: thread_pb.AppendTurnRequest, timeout_s: float
    ) -> thread_pb.AppendTurnResponse:
        if self.down:
            raise DependencyFailed("thread_store", "UNAVAILABLE")
        duplicate = request.turn.turn_id in self.turns
        self.turns.append(request.turn.turn_id)
        return thread_pb.AppendTurnResponse(
            duplicate=duplicate, exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK
        )


class FakeState:
    """Current State as far as Ingest sees it: a fill sets only empty fields and is recorded
    only when it sets one; a change with an expected version is refused once the state moved."""

    def __init__(self) -> None:
        self.state = state_pb.UserState()
        self.applied: list[str] = []
        self.reads = 0

    async def get(self, request: state_pb.GetRequest, timeout_s: float) -> state_pb.GetResponse:
        self.reads += 1
        return state_pb.GetResponse(state=self.state)

    async def apply(
        self, request: state_pb.ApplyRequest, timeout_s: float
    ) -> state_pb.ApplyResponse:
        if not request.any_version and request.expected_version != self.state.version:
            raise DependencyFailed("current_state", "ABORTED", peer_reason="VERSION_MISMATCH")
        if request.change.HasField("fill_empty_profile"):
            fill = request.change.fill_empty_profile
            empty = {f: v for f in ("display_name", "primary_language") if (v := getattr(fill, f))}
            empty = {f: v for f, v in empty.items() if not getattr(self.state.profile, f)}
            if not empty:
                return state_pb.ApplyResponse(state=self.state, unchanged=True)
            for field, value in empty.items():
                setattr(self.state.profile, field, value)
        self.applied.append(request.idempotency_key)
        self.state.version += 1
        return state_pb.ApplyResponse(state=self.state)


class FakeExtractor:
    def __init__(self) -> None:
        self.down = False
        self.refused: set[str] = set()
        self.processed: list[str] = []

    async def process(
        self, request: extractor_pb.ProcessRequest, timeout_s: float
    ) -> extractor_pb.ProcessResponse:
        if self.down:
            raise DependencyFailed("atom_extractor", "UNAVAILABLE")
        if request.turn.turn_id in self.refused:
            raise DependencyFailed(
                "atom_extractor", "INVALID_ARGUMENT", peer_reason="INVALID_FIELD"
            )
        self.processed.append(request.turn.turn_id)
        if request.turn.text.startswith("I'm "):
            name = request.turn.text.removeprefix("I'm ").rstrip(".")
            atom = memory_pb2.Atom(
                key="identity.name", text=f"User's name is {name}.", critical_tokens=[name], confidence_bp=9000,
                status=memory_pb2.ATOM_STATUS_ACTIVE, exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
            )  # fmt: skip
            change = extractor_pb.AtomChange(kind=extractor_pb.CHANGE_KIND_CREATED, atom=atom)
            return extractor_pb.ProcessResponse(changes=[change])
        if request.turn.text == "forget it":
            return extractor_pb.ProcessResponse(command=extractor_pb.COMMAND_FORGET)
        return extractor_pb.ProcessResponse()


class Gateway:
    def __init__(self, database: SqliteDatabase) -> None:
        self.threads = FakeThreads()
        self.state, self.extractor = FakeState(), FakeExtractor()
        handlers = EffectHandlers(self.state, self.extractor).by_kind()
        self.outbox = Outbox(
            database, handlers, RetryPolicy(initial_backoff_s=0.01, max_backoff_s=0.02)
        )

    def handler(self) -> IngestHandler:
        return IngestHandler(self.threads, self.outbox, budget_s=2.0)

    async def ingest(
        self, turn_id: str, text: str, role: memory_pb2.Role.ValueType = memory_pb2.ROLE_USER
    ) -> pb.IngestResponse:
        turn = memory_pb2.Turn(
            turn_id=turn_id, session_id="s1", role=role, text=text, time=timestamp_of(NOW_US)
        )
        return await self.handler().ingest(pb.IngestRequest(scope=SCOPE, turn=turn), None)


@pytest_asyncio.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Gateway]:
    database = SqliteDatabase.open(tmp_path / "gateway.sqlite3", migrations_for(Dialect.SQLITE))
    yield Gateway(database)
    await database.close()


async def test_a_healthy_ingest_records_and_extracts_before_answering(gateway: Gateway) -> None:
    reply = await gateway.ingest("t1", "forget it")
    assert reply.ok and not reply.extraction_queued and reply.command == "FORGET"
    assert gateway.extractor.processed == ["t1"]
    assert gateway.state.applied == ["interaction:t1"]
    assert await gateway.outbox.pending("t", "u") == []


async def test_an_archive_failure_fails_the_ingest_and_queues_nothing(gateway: Gateway) -> None:
    gateway.threads.down = True
    with pytest.raises(DependencyFailed):
        await gateway.ingest("t1", "hello")
    assert await gateway.outbox.pending("t", "u") == []


async def test_the_gateway_queues_nothing_for_the_index(gateway: Gateway) -> None:
    # The ThreadStore indexes what it archives: no effect of the gateway is bound for the ranker.
    gateway.extractor.down = True
    await gateway.ingest("t1", "hello")
    assert [(e.kind, e.lane) for e in await gateway.outbox.pending("t", "u")] == [
        ("extract", "atom_extractor")
    ]


async def test_with_the_extractor_down_the_extraction_is_queued_once(gateway: Gateway) -> None:
    gateway.extractor.down = True
    first = await gateway.ingest("t1", "hello")
    again = await gateway.ingest("t1", "hello")
    assert first.extraction_queued and again.extraction_queued and again.duplicate
    assert await gateway.outbox.count_pending("t", "u", EXTRACT) == 1
    gateway.extractor.down = False
    later = await gateway.ingest("t1", "hello")
    assert not later.extraction_queued and await gateway.outbox.count_pending("t", "u") == 0


async def test_a_command_whose_extraction_is_queued_is_still_reported(gateway: Gateway) -> None:
    # The next Brief puts the held command in force, so the caller is told it was heard.
    gateway.extractor.down = True
    reply = await gateway.ingest("t1", "Please stop mentioning my brother.")
    assert reply.extraction_queued and reply.command == "DO_NOT_MENTION"
    plain = await gateway.ingest("t2", "my brother lives in Lisbon")
    assert plain.extraction_queued and plain.command == ""


async def test_a_stated_name_fills_an_empty_profile_in_the_same_ingest(gateway: Gateway) -> None:
    await gateway.ingest("t1", "I'm Ana.")
    assert gateway.state.state.profile.display_name == "Ana"
    assert gateway.state.applied == ["interaction:t1", "profile:t1"]


async def test_a_stated_name_never_overwrites_the_profile(gateway: Gateway) -> None:
    gateway.state.state.profile.display_name = "Kaiser"
    await gateway.ingest("t1", "I'm Ana.")
    assert gateway.state.state.profile.display_name == "Kaiser"
    assert gateway.state.applied == ["interaction:t1"]


async def test_an_assistant_turn_is_only_archived(gateway: Gateway) -> None:
    reply = await gateway.ingest("a1", "Hello Ana.", memory_pb2.ROLE_ASSISTANT)
    assert reply.ok and gateway.threads.turns == ["a1"]
    assert gateway.state.applied == [] and gateway.extractor.processed == []
    assert await gateway.outbox.pending("t", "u") == []


async def test_a_profile_fill_never_reads_the_state_first_so_no_other_change_can_race_it(
    gateway: Gateway,
) -> None:
    # Current State decides "only if empty" itself: the fill is blind, the interaction record
    # moving the version cannot abort it, and the gateway never reads the state to fill it.
    await gateway.ingest("t1", "I'm Ana.")
    await gateway.ingest("t2", "I'm Bo.")
    assert gateway.state.state.profile.display_name == "Ana" and gateway.state.reads == 0
    assert gateway.state.applied == ["interaction:t1", "profile:t1", "interaction:t2"]


async def test_a_fill_queued_in_the_old_form_still_only_fills_an_empty_field(
    gateway: Gateway,
) -> None:
    gateway.state.state.profile.display_name = "Kaiser"
    old = state_pb.ApplyRequest(
        scope=SCOPE, change=state_pb.StateChange(set_display_name="Ana"), reason_code="USER_STATED_PROFILE",
        idempotency_key="profile:display_name:t0", now=timestamp_of(NOW_US),
    )  # fmt: skip
    await gateway.outbox.enqueue_and_deliver(
        "t",
        "u",
        [
            Effect(
                FILL_PROFILE,
                old.SerializeToString(),
                "fill_profile:display_name:t0",
                "current_state",
            )
        ],
        2.0,
    )
    assert gateway.state.state.profile.display_name == "Kaiser" and gateway.state.applied == []


async def test_a_turn_the_extractor_refuses_is_a_dead_letter_and_the_next_turn_is_extracted(
    gateway: Gateway,
) -> None:
    gateway.extractor.refused = {"bad"}
    refused = await gateway.ingest("bad", "hello")
    assert refused.ok and not refused.extraction_queued
    assert [(d.key, d.reason) for d in await gateway.outbox.dead("t", "u")] == [
        ("extract:bad", "atom_extractor:INVALID_ARGUMENT")
    ]
    assert not (await gateway.ingest("t2", "hello")).extraction_queued
    assert gateway.extractor.processed == ["t2"]


async def test_a_session_records_its_interaction_once_a_minute_and_extracts_every_turn(
    gateway: Gateway,
) -> None:
    handler = gateway.handler()
    for turn_id, session_id, seconds in (
        ("t1", "s1", 0),
        ("t2", "s1", 10),
        ("t3", "s1", 61),
        ("t4", "s1", 70),
        ("t5", "s2", 75),
    ):
        turn = memory_pb2.Turn(
            turn_id=turn_id,
            session_id=session_id,
            role=memory_pb2.ROLE_USER,
            text="hello",
            time=timestamp_of(NOW_US + seconds * 1_000_000),
        )
        assert (await handler.ingest(pb.IngestRequest(scope=SCOPE, turn=turn), None)).ok
    assert gateway.state.applied == ["interaction:t1", "interaction:t3", "interaction:t5"]
    assert gateway.extractor.processed == ["t1", "t2", "t3", "t4", "t5"]
    assert await gateway.outbox.pending("t", "u") == []


async def test_a_turn_whose_effects_could_not_be_queued_records_its_interaction_on_retry(
    gateway: Gateway,
) -> None:
    handler = gateway.handler()
    turn = memory_pb2.Turn(
        turn_id="t1", session_id="s1", role=memory_pb2.ROLE_USER, text="hello",
        time=timestamp_of(NOW_US),
    )  # fmt: skip
    request = pb.IngestRequest(scope=SCOPE, turn=turn)
    real_enqueue = gateway.outbox.enqueue_and_deliver

    async def failing(*args: object, **kwargs: object) -> object:
        raise RuntimeError("the gateway's store failed")  # before anything was queued

    gateway.outbox.enqueue_and_deliver = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await handler.ingest(request, None)
    gateway.outbox.enqueue_and_deliver = real_enqueue  # type: ignore[method-assign]
    assert (await handler.ingest(request, None)).ok
    assert gateway.state.applied == ["interaction:t1"]
