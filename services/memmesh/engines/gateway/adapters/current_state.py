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
