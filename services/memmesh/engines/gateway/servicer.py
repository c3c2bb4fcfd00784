"""gRPC adapter of the gateway: each RPC hands its request to one handler."""

from __future__ import annotations

import grpc

from memmesh.engines.gateway.brief import BriefHandler
from memmesh.engines.gateway.control import ControlHandler
from memmesh.engines.gateway.ingest import IngestHandler
from memmesh.engines.gateway.vocabulary import VocabularyPackHandler
from memmesh.engines.gateway.work_orders import WorkOrderHandler
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from memmesh.quality.measurement import MeasurementLog


class GatewayServicer(pb_grpc.GatewayServiceServicer):
    def __init__(
        self,
        brief: BriefHandler,
        ingest: IngestHandler,
        control: ControlHandler,
        vocabulary: VocabularyPackHandler,
        work_orders: WorkOrderHandler,
        measurement: MeasurementLog | None = None,
    ) -> None:
        self._brief = brief
        self._ingest = ingest
        self._control = control
        # Non-authoritative: told about each answered Brief, it feeds nothing back.
        self._measurement = measurement or MeasurementLog(None)
        self._vocabulary = vocabulary
        self._work_orders = work_orders

    async def Brief(
        self, request: pb.BriefRequest, context: grpc.aio.ServicerContext
    ) -> pb.BriefResponse:
        response = await self._brief.brief(request, context.time_remaining())
        self._measurement.record(response)
        return response

    async def Ingest(
        self, request: pb.IngestRequest, context: grpc.aio.ServicerContext
    ) -> pb.IngestResponse:
        return await self._ingest.ingest(request, context.time_remaining())

    async def Command(
        self, request: pb.CommandRequest, context: grpc.aio.ServicerContext
    ) -> pb.CommandResponse:
        return await self._control.command(request, context.time_remaining())

    async def OpenSession(
        self, request: pb.OpenSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.OpenSessionResponse:
        return await self._control.open_session(request, context.time_remaining())

    async def CloseSession(
        self, request: pb.CloseSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.CloseSessionResponse:
        return await self._control.close_session(request, context.time_remaining())

    async def Remember(
        self, request: pb.RememberRequest, context: grpc.aio.ServicerContext
    ) -> pb.RememberResponse:
        return await self._control.remember(request, context.time_remaining())

    async def DebugUser(
        self, request: pb.DebugUserRequest, context: grpc.aio.ServicerContext
    ) -> pb.DebugUserResponse:
        return await self._control.debug_user(request, context.time_remaining())

    async def PutVocabularyPack(
        self, request: pb.PutVocabularyPackRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutVocabularyPackResponse:
        return await self._vocabulary.put(request, context.time_remaining())

    async def UpsertWorkOrder(
        self, request: pb.UpsertWorkOrderRequest, context: grpc.aio.ServicerContext
    ) -> pb.UpsertWorkOrderResponse:
        return await self._work_orders.upsert(request, context.time_remaining())

    async def ListPendingWorkOrders(
        self, request: pb.ListPendingWorkOrdersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListPendingWorkOrdersResponse:
        return await self._work_orders.list_pending(request, context.time_remaining())
