"""ExposureGuard's recall summary and rules, as the gateway's Remember and Command call them
(through call_engine). (The Brief's final gate calls the guard on its own.)"""

from __future__ import annotations

import grpc

from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.runtime.errors import call_engine

ENGINE = "exposure_guard"


class ExposureGuardClient:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = guard_grpc.ExposureGuardServiceStub(channel)

    async def recall_summary(
        self, request: guard_pb.RecallSummaryRequest, timeout_s: float
    ) -> guard_pb.RecallSummaryResponse:
        return await call_engine(ENGINE, self._stub.RecallSummary(request, timeout=timeout_s))

    async def set_rule(
        self, request: guard_pb.SetRuleRequest, timeout_s: float
    ) -> guard_pb.SetRuleResponse:
        return await call_engine(ENGINE, self._stub.SetRule(request, timeout=timeout_s))
