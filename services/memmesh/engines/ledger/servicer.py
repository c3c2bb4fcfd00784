"""gRPC adapter of the ledger: proto in, one use-case call, proto out."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from memmesh.engines.ledger import mapping
from memmesh.engines.ledger.use_cases import LedgerUseCases
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.timeconv import micros_of


class LedgerServicer(pb_grpc.LedgerServiceServicer):
    def __init__(self, ledger: LedgerUseCases) -> None:
        self._ledger = ledger

    async def Append(
        self, request: pb.AppendRequest, context: grpc.aio.ServicerContext
    ) -> pb.AppendResponse:
        outcomes = await self._ledger.append(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.new_events(request),
            request.subject_key_id,
            mapping.expected_head(request),
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

    async def GetSubjectKey(
        self, request: pb.GetSubjectKeyRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetSubjectKeyResponse:
        key = await self._ledger.subject_key(request.scope.tenant_id, request.scope.user_id)
        return pb.GetSubjectKeyResponse(key_id=key.key_id, secret=key.secret)

    async def ShredSubjectKey(
        self, request: pb.ShredSubjectKeyRequest, context: grpc.aio.ServicerContext
    ) -> pb.ShredSubjectKeyResponse:
        outcome = await self._ledger.shred_subject_key(
            request.scope.tenant_id, request.scope.user_id, micros_of(request.now)
        )
        return pb.ShredSubjectKeyResponse(
            shredded=outcome.shredded, key_id=outcome.key_id, sequence=outcome.sequence
        )
