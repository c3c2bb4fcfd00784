"""GetTurnContext answers in one call exactly what OpenSession, GetWorkingMemory, (on a
session start) Resume and (when node ids are asked) Expand at depth 1 answer separately, on
SQLite and on PostgreSQL with Redis; its resume and entities parts are best effort and never
cost the working memory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio

from memmesh.common.v1 import bundle_pb2, memory_pb2, scope_pb2
from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.domain.model import Expansion, Mode, Resumed, Role, Turn
from memmesh.engines.thread_store.domain.sessions import DEFAULT_SESSION_GAP_US
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.runtime.timeconv import timestamp_of
from memmesh.storage.sql import Dialect, SqliteDatabase
from memmesh.testing.in_process import InProcessMesh, start_in_process
from memmesh.testing.scopes import new_scope
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

T0 = 1_767_225_600_000_000
MINUTE = 60_000_000
START, IN_SESSION = bundle_pb2.SESSION_MODE_SESSION_START, bundle_pb2.SESSION_MODE_IN_SESSION


@pytest_asyncio.fixture(params=["sqlite", "postgres+redis"])
async def stub(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[pb_grpc.ThreadStoreServiceStub]:
    monkeypatch.setenv("MEMMESH_THREAD_STORE_SESSION_GAP_S", "600")
    overrides: dict[str, object] = {}
    if request.param == "postgres+redis":
        overrides = {
            "storage_url": request.getfixturevalue("postgres_url"),
            "redis_url": request.getfixturevalue("redis_url"),
        }
    mesh: InProcessMesh = await start_in_process(
        ["retrieval_ranker", "thread_store"], tmp_path, **overrides
    )
    yield pb_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
    await mesh.stop()


def append(
    scope: scope_pb2.UserScope, turn_id: str, text: str, minute: int, session: str
) -> pb.AppendTurnRequest:
    turn = memory_pb2.Turn(
        turn_id=turn_id,
        session_id=session,
        role=memory_pb2.ROLE_USER,
        text=text,
        time=timestamp_of(T0 + minute * MINUTE),
    )
    return pb.AppendTurnRequest(scope=scope, turn=turn)


async def separately(
    stub: pb_grpc.ThreadStoreServiceStub,
    scope: scope_pb2.UserScope,
    session: str,
    minute: int,
    mode: int = 0,
) -> pb.GetTurnContextResponse:
    """What the three separate calls answer, in GetTurnContext's shape."""
    now = timestamp_of(T0 + minute * MINUTE)
    decided = (
        mode
        or (
            await stub.OpenSession(pb.OpenSessionRequest(scope=scope, session_id=session, now=now))
        ).mode
    )
    memory = await stub.GetWorkingMemory(
        pb.GetWorkingMemoryRequest(scope=scope, session_id=session)
    )
    expected = pb.GetTurnContextResponse(mode=decided, working_memory=memory)
    if decided == START:
        expected.resume.CopyFrom(
            await stub.Resume(pb.ResumeRequest(scope=scope, session_id=session, now=now))
        )
    return expected


async def in_one_call(
    stub: pb_grpc.ThreadStoreServiceStub,
    scope: scope_pb2.UserScope,
    session: str,
    minute: int,
    mode: int = 0,
) -> pb.GetTurnContextResponse:
    now = timestamp_of(T0 + minute * MINUTE)
    return await stub.GetTurnContext(
        pb.GetTurnContextRequest(scope=scope, session_id=session, now=now, mode=mode)
    )


async def test_an_unknown_user_starts_a_session_with_nothing_to_resume(
    stub: pb_grpc.ThreadStoreServiceStub,
) -> None:
    context = await in_one_call(stub, new_scope(), "s1", 0)
    assert context == pb.GetTurnContextResponse(
        mode=START, working_memory=pb.GetWorkingMemoryResponse(), resume=pb.ResumeResponse()
    )


async def test_one_call_equals_the_separate_calls_in_and_across_sessions(
    stub: pb_grpc.ThreadStoreServiceStub,
) -> None:
    scope = new_scope()
    await stub.AppendTurn(append(scope, "a1", "Sarah and I planned the Paris trip.", 0, "a"))
    await stub.AppendTurn(append(scope, "a2", "I need to book the flights.", 1, "a"))
    await stub.AppendTurn(append(scope, "b1", "Tom fixed the Berlin flat.", 60, "b"))
    await stub.CloseSession(
        pb.CloseSessionRequest(scope=scope, session_id="b", now=timestamp_of(T0 + 61 * MINUTE))
    )
    await stub.PinThread(pb.PinThreadRequest(scope=scope, thread_id="a", pinned=True))
    cases = [
        ("b", 62),  # in session
        ("b", 75),  # a gap over the threshold starts a session
        ("c", 62),  # a new session id starts a session
        ("a", 5_000),  # days later: resume tiers move
    ]
    for session, minute in cases:
        expected = await separately(stub, scope, session, minute)
        assert await in_one_call(stub, scope, session, minute) == expected, (session, minute)
    assert (await in_one_call(stub, scope, "b", 62)).mode == IN_SESSION
    assert [d.thread_id for d in (await in_one_call(stub, scope, "c", 62)).resume.candidates] == [
        "a",
        "b",
    ]


async def test_a_mode_the_caller_knows_is_kept(stub: pb_grpc.ThreadStoreServiceStub) -> None:
    scope = new_scope()
    await stub.AppendTurn(append(scope, "a1", "Sarah and I planned the Paris trip.", 0, "a"))
    kept = await in_one_call(stub, scope, "z", 1, mode=IN_SESSION)
    assert kept == await separately(stub, scope, "z", 1, mode=IN_SESSION)
    assert kept.mode == IN_SESSION and not kept.HasField("resume")
    started = await in_one_call(stub, scope, "a", 1, mode=START)
    assert started == await separately(stub, scope, "a", 1, mode=START)
    assert started.mode == START and started.HasField("resume")


async def test_another_users_context_is_never_visible(stub: pb_grpc.ThreadStoreServiceStub) -> None:
    owner, stranger = new_scope(), new_scope()
    await stub.AppendTurn(append(owner, "a1", "Remind me to call Sarah about Paris.", 0, "s1"))
    await stub.CloseSession(
        pb.CloseSessionRequest(scope=owner, session_id="s1", now=timestamp_of(T0 + MINUTE))
    )
    for other in (
        stranger,
        scope_pb2.UserScope(tenant_id=owner.tenant_id, user_id=stranger.user_id),
    ):
        context = await in_one_call(stub, other, "s1", 2)
        assert context == pb.GetTurnContextResponse(
            mode=START, working_memory=pb.GetWorkingMemoryResponse(), resume=pb.ResumeResponse()
        )


async def test_the_entities_part_equals_expand_at_depth_one(
    stub: pb_grpc.ThreadStoreServiceStub,
) -> None:
    scope = new_scope()
    await stub.AppendTurn(
        append(scope, "a1", "Sarah and I planned the Paris trip with Tom.", 0, "a")
    )
    await stub.AppendTurn(append(scope, "a2", "Sarah booked the Louvre and Orsay.", 1, "a"))
    now = timestamp_of(T0 + 2 * MINUTE)
    ids = ["entity:sarah", "entity:unknown", "entity:paris"]
    plain = await stub.GetTurnContext(
        pb.GetTurnContextRequest(scope=scope, session_id="a", now=now)
    )
    asked = await stub.GetTurnContext(
        pb.GetTurnContextRequest(
            scope=scope, session_id="a", now=now, entity_node_ids=ids, entity_fan_out=2
        )
    )
    expanded = await stub.Expand(pb.ExpandRequest(scope=scope, node_ids=ids, depth=1, fan_out=2))
    assert expanded.edges and asked.entities == expanded and not asked.entities_unavailable
    asked.ClearField("entities")
    assert asked == plain and not plain.HasField("entities")


async def test_a_long_entity_name_is_looked_up(stub: pb_grpc.ThreadStoreServiceStub) -> None:
    scope = new_scope()
    await stub.AppendTurn(
        append(scope, "a1", "Sarah met Bartholomew Featherstonehaugh in Paris.", 0, "a")
    )
    long_id = "entity:bartholomew-featherstonehaugh"
    context = await stub.GetTurnContext(
        pb.GetTurnContextRequest(
            scope=scope, session_id="a", now=timestamp_of(T0 + MINUTE), entity_node_ids=[long_id]
        )
    )
    assert {e.from_node_id for e in context.entities.edges} == {long_id}
    assert {e.to_node_id for e in context.entities.edges} == {"entity:sarah", "entity:paris"}


async def test_expand_looks_up_a_long_entity_name_and_refuses_too_many_start_nodes(
    stub: pb_grpc.ThreadStoreServiceStub,
) -> None:
    scope = new_scope()
    await stub.AppendTurn(
        append(scope, "a1", "Sarah met Bartholomew Featherstonehaugh in Paris.", 0, "a")
    )
    long_id = "entity:bartholomew-featherstonehaugh"
    expanded = await stub.Expand(pb.ExpandRequest(scope=scope, node_ids=[long_id], depth=1))
    assert {e.to_node_id for e in expanded.edges} == {"entity:sarah", "entity:paris"}
    many = [f"entity:n{i}" for i in range(21)]
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Expand(pb.ExpandRequest(scope=scope, node_ids=many, depth=1))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "node_ids" in (raised.value.details() or "")


async def test_too_many_entity_lookups_are_invalid(stub: pb_grpc.ThreadStoreServiceStub) -> None:
    ids = [f"entity:n{i}" for i in range(33)]
    request = pb.GetTurnContextRequest(
        scope=new_scope(), session_id="a", now=timestamp_of(T0), entity_node_ids=ids
    )
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.GetTurnContext(request)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


class FailingEntities(ThreadStoreUseCases):
    """A ThreadStore whose graph walk fails or takes its time."""

    def __init__(self, *args: object, fail: bool) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self._fail = fail

    async def expand(
        self,
        tenant_id: str,
        user_id: str,
        node_ids: list[str],
        depth: int,
        fan_out: int,
        max_nodes: int = 20,
    ) -> Expansion:
        if self._fail:
            raise RuntimeError("graph unreadable")
        await asyncio.sleep(0.5)
        return await super().expand(tenant_id, user_id, node_ids, depth, fan_out, max_nodes)


@pytest.mark.parametrize("fail", [True, False])
async def test_a_failed_or_late_entities_part_leaves_the_rest_whole(
    tmp_path: Path, fail: bool
) -> None:
    store = SqlThreadStore(
        SqliteDatabase.open(tmp_path / "thread_store.sqlite3", migrations(Dialect.SQLITE))
    )
    service = FailingEntities(store, None, DEFAULT_SESSION_GAP_US, 6, fail=fail)
    try:
        await service.append_turn(
            "t", "u", Turn("t1", "a", Role.USER, "Sarah booked the Paris flat.", T0)
        )
        ids = ["entity:sarah"]
        context = await service.turn_context(
            "t", "u", "b", T0 + MINUTE, 0, None, resume_budget_s=0.05, entity_node_ids=ids
        )
        assert (context.entities, context.entities_unavailable) == (None, True)
        assert (
            context.mode == Mode.SESSION_START
            and context.resumed is not None
            and not context.resume_unavailable
        )
        assert context.memory == await service.working_memory("t", "u", "b", 0)
        nothing_asked = await service.turn_context(
            "t", "u", "a", T0 + MINUTE, 0, None, resume_budget_s=0.05
        )
        assert (nothing_asked.entities, nothing_asked.entities_unavailable) == (None, False)
    finally:
        await store.close()


class SlowResume(ThreadStoreUseCases):
    """A ThreadStore whose resume part fails or takes its time."""

    def __init__(self, *args: object, fail: bool) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self._fail = fail

    async def resume(self, tenant_id: str, user_id: str, session_id: str, now_us: int) -> Resumed:
        if self._fail:
            raise RuntimeError("digests unreadable")
        await asyncio.sleep(0.5)
        return await super().resume(tenant_id, user_id, session_id, now_us)


@pytest.mark.parametrize("fail", [True, False])
async def test_a_failed_or_late_resume_leaves_the_working_memory_whole(
    tmp_path: Path, fail: bool
) -> None:
    store = SqlThreadStore(
        SqliteDatabase.open(tmp_path / "thread_store.sqlite3", migrations(Dialect.SQLITE))
    )
    service = SlowResume(store, None, DEFAULT_SESSION_GAP_US, 6, fail=fail)
    try:
        await service.append_turn(
            "t", "u", Turn("t1", "a", Role.USER, "I need to book the dentist.", T0)
        )
        context = await service.turn_context(
            "t", "u", "b", T0 + MINUTE, 0, None, resume_budget_s=0.05
        )
        assert (context.mode, context.resumed, context.resume_unavailable) == (
            Mode.SESSION_START,
            None,
            True,
        )
        assert context.memory == await service.working_memory("t", "u", "b", 0)
        in_session = await service.turn_context(
            "t", "u", "a", T0 + MINUTE, 0, None, resume_budget_s=0.05
        )
        assert (in_session.mode, in_session.resume_unavailable) == (Mode.IN_SESSION, False)
    finally:
        await store.close()


async def test_a_session_start_gets_where_we_left_off_of_the_top_thread_even_before_its_close(
    stub: pb_grpc.ThreadStoreServiceStub,
) -> None:
    scope = new_scope()
    await stub.AppendTurn(append(scope, "a1", "Sarah and I planned the Paris trip.", 0, "a"))
    await stub.AppendTurn(append(scope, "a2", "Remind me to book the flights.", 1, "a"))
    await stub.AppendTurn(append(scope, "a3", "Which hotel is closer to the Louvre?", 2, "a"))
    # "a" is still open: its digest is built for the resume, not stored.
    resumed = (await in_one_call(stub, scope, "b", 60)).resume
    assert [d.thread_id for d in resumed.candidates] == ["a"] and resumed.tier == "HOT"
    assert 1 <= len(resumed.left_off) <= 3
    assert "Still open: Which hotel is closer to the Louvre?" in resumed.left_off
    assert any("flights" in bullet for bullet in resumed.left_off)
    # Closed, the stored digest answers the same (its summary is the Reflector's now, its
    # bullets still the fields' and its sessions' sentences); days later the tier moves on.
    await stub.CloseSession(
        pb.CloseSessionRequest(scope=scope, session_id="a", now=timestamp_of(T0 + 3 * MINUTE))
    )
    assert (await in_one_call(stub, scope, "b", 60)).resume.left_off == resumed.left_off
    assert (await in_one_call(stub, scope, "c", 10 * 24 * 60)).resume.tier == "WARM"
    assert (await in_one_call(stub, scope, "d", 40 * 24 * 60)).resume.tier == "COLD"


async def test_resume_thread_finds_the_thread_records_its_use_and_the_turn_context_answers_it(
    stub: pb_grpc.ThreadStoreServiceStub,
) -> None:
    scope = new_scope()
    await stub.AppendTurn(append(scope, "a1", "Remind me to order cedar for the shed.", 0, "a"))
    await stub.CloseSession(
        pb.CloseSessionRequest(scope=scope, session_id="a", now=timestamp_of(T0 + MINUTE))
    )
    cold = 40 * 24 * 60
    missing = await stub.ResumeThread(
        pb.ResumeThreadRequest(scope=scope, topic="tax forms", now=timestamp_of(T0 + cold * MINUTE))
    )
    assert not missing.found
    found = await stub.ResumeThread(
        pb.ResumeThreadRequest(
            scope=scope, topic="the shed", session_id="b", now=timestamp_of(T0 + cold * MINUTE)
        )
    )
    assert found.found and found.digest.thread_id == "a" and found.digest.use_count == 1
    assert any("cedar" in bullet for bullet in found.left_off)
    asked = await stub.GetTurnContext(
        pb.GetTurnContextRequest(
            scope=scope,
            session_id="b",
            now=timestamp_of(T0 + (cold + 1) * MINUTE),
            mode=IN_SESSION,
            resume_thread_id="a",
        )
    )
    assert asked.resume.tier == "HOT" and list(asked.resume.left_off) == list(found.left_off)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.ResumeThread(pb.ResumeThreadRequest(scope=scope, now=timestamp_of(T0)))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "topic" in (refused.value.details() or "")
