"""CurrentState, as the gateway calls it (every call through call_engine)."""

from __future__ import annotations

import grpc

from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.runtime.errors import call_engine

ENGINE = "current_state"


class CurrentStateClient:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = state_grpc.CurrentStateServiceStub(channel)

    async def get(self, request: state_pb.GetRequest, timeout_s: float) -> state_pb.GetResponse:
        return await call_engine(ENGINE, self._stub.Get(request, timeout=timeout_s))

    async def apply(
        self, request: state_pb.ApplyRequest, timeout_s: float
    ) -> state_pb.ApplyResponse:
        return await call_engine(ENGINE, self._stub.Apply(request, timeout=timeout_s))

    async def upsert_work_order(
        self, request: state_pb.UpsertWorkOrderRequest, timeout_s: float
    ) -> state_pb.UpsertWorkOrderResponse:
        return await call_engine(ENGINE, self._stub.UpsertWorkOrder(request, timeout=timeout_s))

    async def list_work_orders(
        self, request: state_pb.ListWorkOrdersRequest, timeout_s: float
    ) -> state_pb.ListWorkOrdersResponse:
        return await call_engine(ENGINE, self._stub.ListWorkOrders(request, timeout=timeout_s))

    async def run_work_order_command(
        self, request: state_pb.RunWorkOrderCommandRequest, timeout_s: float
    ) -> state_pb.RunWorkOrderCommandResponse:
        return await call_engine(ENGINE, self._stub.RunWorkOrderCommand(request, timeout=timeout_s))
