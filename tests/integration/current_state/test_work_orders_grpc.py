"""Work orders over gRPC with a real Ledger, on SQLite and on PostgreSQL + Redis: every
status change is a reason-coded ledger event, illegal moves and bad input are refused."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as pb_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.errors import details_of
from memmesh.testing.in_process import InProcessMesh

NOW = Timestamp(seconds=1_767_225_600)
LATER = Timestamp(seconds=1_767_225_660)


def upsert(
    scope: scope_pb2.UserScope,
    status: pb.WorkOrderStatus.ValueType,
    now: Timestamp = NOW,
    **fields: str,
) -> pb.UpsertWorkOrderRequest:
    values = {"title": "book a table for Friday", "pending_question": "For how many people?"}
    values.update(fields)
    return pb.UpsertWorkOrderRequest(
        scope=scope, work_order_id="wo-1", status=status, now=now, **values
    )


def command(
    scope: scope_pb2.UserScope, which: pb.WorkOrderCommand.ValueType, work_order_id: str = "wo-1"
) -> pb.RunWorkOrderCommandRequest:
    return pb.RunWorkOrderCommandRequest(
        scope=scope, work_order_id=work_order_id, command=which, now=LATER
    )


async def work_order_events(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> list[tuple[str, str]]:
    ledger = ledger_grpc.LedgerServiceStub(mesh.channel("ledger"))
    events = [r.event async for r in ledger.Read(ledger_pb.ReadRequest(scope=scope))]
    return [
        (e.reason_code, next(a.string_value for a in e.attributes if a.name == "status"))
        for e in events
        if e.event_type == "WORK_ORDER_CHANGED"
    ]


async def test_status_changes_are_reason_coded_ledger_events(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    created = await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_CLARIFY))
    assert created.work_order.revision == 1 and not created.unchanged
    again = await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_CLARIFY, LATER))
    assert again.unchanged and again.work_order.update_time == NOW
    await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_CONFIRM, LATER))
    canceled = await state.RunWorkOrderCommand(command(scope, pb.WORK_ORDER_COMMAND_CANCEL))
    assert canceled.found and canceled.work_order.status == pb.WORK_ORDER_STATUS_CANCELED
    assert await work_order_events(mesh, scope) == [
        ("CREATED", "CLARIFY"),
        ("CONFIRM_REQUESTED", "CONFIRM"),
        ("CANCELED_BY_USER", "CANCELED"),
    ]


async def test_a_closed_order_is_failed_precondition_with_its_reason(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_DONE))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_CLARIFY, LATER))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert details_of(refused.value)[0] == "WORK_ORDER_CLOSED"
    assert "DONE" in (refused.value.details() or "")


async def test_unspecified_status_and_empty_title_are_refused_naming_the_field(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    for request, field in (
        (upsert(scope, pb.WORK_ORDER_STATUS_UNSPECIFIED), "status"),
        (upsert(scope, pb.WORK_ORDER_STATUS_DRAFT, title=" \n "), "title"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await state.UpsertWorkOrder(request)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in details_of(refused.value)[1]


async def test_forget_hides_the_order_from_mentionable_lists_and_keeps_its_status(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_CONFIRM))
    missing = await state.RunWorkOrderCommand(
        command(scope, pb.WORK_ORDER_COMMAND_DO_NOT_MENTION, "wo-2")
    )
    assert not missing.found
    quiet = await state.RunWorkOrderCommand(command(scope, pb.WORK_ORDER_COMMAND_DO_NOT_MENTION))
    assert quiet.work_order.do_not_mention
    assert quiet.work_order.status == pb.WORK_ORDER_STATUS_CONFIRM
    listed = await state.ListWorkOrders(
        pb.ListWorkOrdersRequest(scope=scope, pending_only=True, mentionable_only=True)
    )
    assert list(listed.work_orders) == []
    everything = await state.ListWorkOrders(pb.ListWorkOrdersRequest(scope=scope))
    assert [o.work_order_id for o in everything.work_orders] == ["wo-1"]
    assert ("FORGOTTEN", "CONFIRM") in await work_order_events(mesh, scope)


async def test_forget_everything_takes_the_users_work_orders(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_DRAFT))
    await state.Apply(
        pb.ApplyRequest(
            scope=scope,
            change=pb.StateChange(forget_profile=pb.ForgetProfile()),
            any_version=True,
            reason_code="USER_REQUEST",
            idempotency_key="forget",
            now=LATER,
        )
    )
    assert (
        list((await state.ListWorkOrders(pb.ListWorkOrdersRequest(scope=scope))).work_orders) == []
    )


async def test_get_answers_the_top_pending_order_only_when_asked(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    asked = pb.GetRequest(scope=scope, with_pending_work=True)
    assert not (await state.Get(asked)).HasField("pending_work_order")
    await state.UpsertWorkOrder(upsert(scope, pb.WORK_ORDER_STATUS_CONFIRM))
    newer = upsert(scope, pb.WORK_ORDER_STATUS_DRAFT, LATER, title="renew the passport")
    newer.work_order_id = "wo-2"
    await state.UpsertWorkOrder(newer)
    assert (await state.Get(asked)).pending_work_order.work_order_id == "wo-2"
    assert not (await state.Get(pb.GetRequest(scope=scope))).HasField("pending_work_order")
    # One the user asked to forget is never the one answered.
    await state.RunWorkOrderCommand(command(scope, pb.WORK_ORDER_COMMAND_DO_NOT_MENTION, "wo-2"))
    assert (await state.Get(asked)).pending_work_order.work_order_id == "wo-1"
