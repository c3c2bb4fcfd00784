"""gRPC adapter of the ledger: proto in, one use-case call, proto out."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from memmesh.engines.ledger import mapping
from memmesh.engines.ledger.use_cases import LedgerUseCases
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc


class LedgerServicer(pb_grpc.LedgerServiceServicer):
    def __init__(self, ledger: LedgerUseCases) -> None:
        self._ledger = ledger

    async def Append(
        self, request: pb.AppendRequest, context: grpc.aio.ServicerContext
    ) -> pb.AppendResponse:
        outcomes = await self._ledger.append(
            request.scope.tenant_id, request.scope.user_id, mapping.new_events(request)
        )
        return mapping.append_response(outcomes)

    async def Read(
        self, request: pb.ReadRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ReadResponse]:
        async for stored in self._ledger.read(
            request.scope.tenant_id, request.scope.user_id, request.from_sequence, request.limit
        ):
            yield pb.ReadResponse(event=mapping.event_message(stored))

    async def Verify(
        self, request: pb.VerifyRequest, context: grpc.aio.ServicerContext
    ) -> pb.VerifyResponse:
        report = await self._ledger.verify(request.scope.tenant_id, request.scope.user_id)
        return mapping.verify_response(report)
