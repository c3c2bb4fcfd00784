"""gRPC adapter of Current State: proto in, one use-case call, proto out."""

from __future__ import annotations

import grpc

from memmesh.current_state.v1 import current_state_service_pb2 as pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as pb_grpc
from memmesh.engines.current_state import mapping
from memmesh.engines.current_state.use_cases import CurrentStateService
from memmesh.engines.current_state.work_orders import WorkOrderService
from memmesh.runtime.timeconv import micros_of


class CurrentStateServicer(pb_grpc.CurrentStateServiceServicer):
    def __init__(self, service: CurrentStateService, work_orders: WorkOrderService) -> None:
        self._service = service
        self._work_orders = work_orders

    async def Get(
        self, request: pb.GetRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetResponse:
        tenant_id, user_id = request.scope.tenant_id, request.scope.user_id
        state = await self._service.get(tenant_id, user_id)
        if not request.with_pending_work:
            return pb.GetResponse(state=mapping.state_message(state))
        pending = await self._work_orders.list(tenant_id, user_id, True, True, 1)
        return pb.GetResponse(
            state=mapping.state_message(state),
            pending_work_order=mapping.work_order_message(pending[0]) if pending else None,
        )

    async def Apply(
        self, request: pb.ApplyRequest, context: grpc.aio.ServicerContext
    ) -> pb.ApplyResponse:
        applied = await self._service.apply(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.change_of(request.change),
            expected_version=None if request.any_version else request.expected_version,
            reason_code=request.reason_code,
            idempotency_key=request.idempotency_key,
            now_us=micros_of(request.now),
        )
        return pb.ApplyResponse(
            state=mapping.state_message(applied.state),
            duplicate=applied.duplicate,
            unchanged=applied.unchanged,
        )

    async def Rebuild(
        self, request: pb.RebuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.RebuildResponse:
        rebuilt = await self._service.rebuild(
            request.scope.tenant_id, request.scope.user_id, request.replace_live
        )
        return pb.RebuildResponse(
            state=mapping.state_message(rebuilt.state),
            checksum=rebuilt.checksum,
            live_checksum=rebuilt.live_checksum,
            events_replayed=rebuilt.events_replayed,
        )

    async def UpsertWorkOrder(
        self, request: pb.UpsertWorkOrderRequest, context: grpc.aio.ServicerContext
    ) -> pb.UpsertWorkOrderResponse:
        changed = await self._work_orders.upsert(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.work_order_draft(request),
            micros_of(request.now),
        )
        return pb.UpsertWorkOrderResponse(
            work_order=mapping.work_order_message(changed.order), unchanged=changed.unchanged
        )

    async def ListWorkOrders(
        self, request: pb.ListWorkOrdersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListWorkOrdersResponse:
        orders = await self._work_orders.list(
            request.scope.tenant_id,
            request.scope.user_id,
            request.pending_only,
            request.mentionable_only,
            request.page_size,
        )
        return pb.ListWorkOrdersResponse(work_orders=map(mapping.work_order_message, orders))

    async def RunWorkOrderCommand(
        self, request: pb.RunWorkOrderCommandRequest, context: grpc.aio.ServicerContext
    ) -> pb.RunWorkOrderCommandResponse:
        changed = await self._work_orders.run_command(
            request.scope.tenant_id,
            request.scope.user_id,
            request.work_order_id,
            mapping.work_order_command(request.command),
            micros_of(request.now),
        )
        if changed is None:
            return pb.RunWorkOrderCommandResponse(found=False)
        return pb.RunWorkOrderCommandResponse(
            found=True,
            work_order=mapping.work_order_message(changed.order),
            unchanged=changed.unchanged,
        )
