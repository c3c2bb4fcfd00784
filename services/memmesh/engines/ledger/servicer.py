"""gRPC adapter of the ledger: proto in, one domain call, proto out."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from memmesh.engines.ledger import mapping
from memmesh.engines.ledger.chain import ChainWalker
from memmesh.engines.ledger.store import LedgerStore
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc


class LedgerServicer(pb_grpc.LedgerServiceServicer):
    def __init__(self, store: LedgerStore) -> None:
        self._store = store

    async def Append(self, request: pb.AppendRequest, context: grpc.aio.ServicerContext) -> pb.AppendResponse:
        outcomes = await self._store.append(
            request.scope.tenant_id, request.scope.user_id, mapping.new_events(request)
        )
        return pb.AppendResponse(
            events=[pb.AppendedEvent(sequence=o.sequence, hash=o.hash, duplicate=o.duplicate) for o in outcomes]
        )

    async def Read(self, request: pb.ReadRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[pb.ReadResponse]:
        async for stored in self._store.read(
            request.scope.tenant_id, request.scope.user_id, request.from_sequence, request.limit
        ):
            yield pb.ReadResponse(event=mapping.event_message(stored))

    async def Verify(self, request: pb.VerifyRequest, context: grpc.aio.ServicerContext) -> pb.VerifyResponse:
        tenant, user = request.scope.tenant_id, request.scope.user_id
        walker = ChainWalker(tenant, user)
        async for stored in self._store.read(tenant, user, 1, 0):
            if not walker.feed(stored):
                break
        return mapping.verify_response(walker.report())
