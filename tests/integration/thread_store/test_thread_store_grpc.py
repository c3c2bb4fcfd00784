"""The ThreadStore over gRPC with in-process engines: idempotency, voice lock, validation, settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio

from memmesh.common.v1 import bundle_pb2, memory_pb2, scope_pb2
from memmesh.runtime.errors import details_of
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.in_process import InProcessMesh, start_in_process
from memmesh.testing.scopes import new_scope
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

T0 = 1_767_225_600_000_000
MINUTE = 60_000_000
START, IN_SESSION = bundle_pb2.SESSION_MODE_SESSION_START, bundle_pb2.SESSION_MODE_IN_SESSION


@pytest_asyncio.fixture
async def mesh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[InProcessMesh]:
    monkeypatch.setenv("MEMMESH_THREAD_STORE_SESSION_GAP_S", "600")
    running = await start_in_process(["retrieval_ranker", "thread_store"], tmp_path)
    yield running
    await running.stop()


@pytest.fixture
def stub(mesh: InProcessMesh) -> pb_grpc.ThreadStoreServiceStub:
    return pb_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))


def append(
    scope: scope_pb2.UserScope, turn_id: str, text: str, minute: int, session: str = "s1"
) -> pb.AppendTurnRequest:
    return pb.AppendTurnRequest(
        scope=scope,
        turn=memory_pb2.Turn(
            turn_id=turn_id, session_id=session, role=memory_pb2.ROLE_USER, text=text,
            time=timestamp_of(T0 + minute * MINUTE),
        ),
    )  # fmt: skip


async def test_append_turn_is_idempotent_over_grpc(stub: pb_grpc.ThreadStoreServiceStub) -> None:
    scope = new_scope()
    first = await stub.AppendTurn(append(scope, "t1", "I need to book the dentist.", 0))
    again = await stub.AppendTurn(append(scope, "t1", "I need to book the dentist.", 0))
    assert (first.mode, first.duplicate) == (START, False)
    assert (again.mode, again.duplicate, len(again.loops_changed)) == (START, True, 0)
    assert [loop.text for loop in first.loops_opened] == ["Book the dentist"]
    memory = await stub.GetWorkingMemory(pb.GetWorkingMemoryRequest(scope=scope, session_id="s1"))
    assert [t.turn_id for t in memory.turns] == ["t1"] and len(memory.active_loops) == 1


async def test_the_session_gap_comes_from_settings(stub: pb_grpc.ThreadStoreServiceStub) -> None:
    scope = new_scope()
    await stub.AppendTurn(append(scope, "t1", "Hello.", 0))
    assert (await stub.AppendTurn(append(scope, "t2", "Ten minutes later.", 10))).mode == IN_SESSION
    assert (await stub.AppendTurn(append(scope, "t3", "Eleven more.", 21))).mode == START


async def test_another_users_session_is_never_visible(stub: pb_grpc.ThreadStoreServiceStub) -> None:
    owner, stranger = new_scope(), new_scope()
    same_tenant = scope_pb2.UserScope(tenant_id=owner.tenant_id, user_id=stranger.user_id)
    await stub.AppendTurn(append(owner, "t1", "Remind me to call Sarah about Paris.", 0))
    await stub.CloseSession(
        pb.CloseSessionRequest(scope=owner, session_id="s1", now=timestamp_of(T0 + MINUTE))
    )
    for other in (stranger, same_tenant):
        memory = await stub.GetWorkingMemory(
            pb.GetWorkingMemoryRequest(scope=other, session_id="s1")
        )
        assert memory == pb.GetWorkingMemoryResponse()
        resumed = await stub.Resume(
            pb.ResumeRequest(scope=other, session_id="s2", now=timestamp_of(T0 + 2 * MINUTE))
        )
        assert resumed == pb.ResumeResponse()
        assert (
            await stub.Expand(pb.ExpandRequest(scope=other, node_ids=["entity:sarah"]))
            == pb.ExpandResponse()
        )
        closed = await stub.CloseSession(
            pb.CloseSessionRequest(scope=other, session_id="s1", now=timestamp_of(T0))
        )
        assert closed == pb.CloseSessionResponse(digest=memory_pb2.Digest())
        forgot = await stub.ForgetThread(
            pb.ForgetThreadRequest(scope=other, thread_id="s1", now=timestamp_of(T0))
        )
        assert not forgot.forgotten
        duplicate = await stub.AppendTurn(append(other, "t1", "Same turn id, other user.", 1))
        assert not duplicate.duplicate
    owned = await stub.GetWorkingMemory(pb.GetWorkingMemoryRequest(scope=owner, session_id="s1"))
    assert [t.turn_id for t in owned.turns] == ["t1"]


async def test_close_session_digest_and_resume_with_pin_and_use(
    stub: pb_grpc.ThreadStoreServiceStub,
) -> None:
    scope = new_scope()
    await stub.AppendTurn(
        append(scope, "a1", "Sarah and I planned the Paris trip.", 0, session="a")
    )
    await stub.AppendTurn(append(scope, "b1", "Tom fixed the Berlin flat.", 60, session="b"))
    digest = (
        await stub.CloseSession(
            pb.CloseSessionRequest(scope=scope, session_id="b", now=timestamp_of(T0))
        )
    ).digest
    assert (
        digest.thread_id == "b"
        and digest.title == "Tom, Berlin"
        and list(digest.evidence_turn_ids) == ["b1"]
    )
    now = timestamp_of(T0 + 4 * 24 * 60 * MINUTE)
    resumed = await stub.Resume(pb.ResumeRequest(scope=scope, session_id="c", now=now))
    assert [d.thread_id for d in resumed.candidates] == ["b", "a"] and resumed.tier == "WARM"
    assert resumed.episode_bridge == "Tom fixed the Berlin flat."
    assert (
        await stub.PinThread(pb.PinThreadRequest(scope=scope, thread_id="a", pinned=True))
    ).found
    used = await stub.RecordThreadUse(
        pb.RecordThreadUseRequest(scope=scope, thread_id="a", now=now)
    )
    assert (used.found, used.use_count) == (True, 1)
    resumed = await stub.Resume(pb.ResumeRequest(scope=scope, session_id="c", now=now))
    assert [d.thread_id for d in resumed.candidates] == ["a", "b"] and resumed.tier == "HOT"
    assert resumed.candidates[0].pinned and resumed.candidates[0].use_count == 1


@pytest.mark.parametrize("missing", ["turn_id", "session_id", "role", "time"])
async def test_a_turn_missing_a_required_field_is_invalid_argument_naming_it(
    stub: pb_grpc.ThreadStoreServiceStub, missing: str
) -> None:
    request = append(new_scope(), "t1", "Hello.", 0)
    request.turn.ClearField(missing)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.AppendTurn(request)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"turn.{missing}" in details_of(raised.value)[1]
