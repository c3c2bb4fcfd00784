"""gRPC adapter of the ranker: proto in, one domain call, proto out."""

from __future__ import annotations

import asyncio

import grpc

from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as pb_grpc


class RetrievalRankerServicer(pb_grpc.RetrievalRankerServiceServicer):
    def __init__(self, service: RankerService, analyzer: Analyzer) -> None:
        self._service = service
        self._analyzer = analyzer

    async def Upsert(
        self, request: pb.UpsertRequest, context: grpc.aio.ServicerContext
    ) -> pb.UpsertResponse:
        # Off the event loop: a turn's vector from the sentence encoder takes about 1.5 ms, so
        # a large batch (a restore, a ThreadStore's backlog) would hold every Retrieve behind
        # it; in a worker thread the loop still gets its turns. A turn's few atoms take their
        # vectors from the static table, in less than the hand-off to a thread costs.
        if mapping.maps_quickly(request):
            docs = mapping.upsert_docs(request, self._analyzer)
        else:
            docs = await asyncio.to_thread(mapping.upsert_docs, request, self._analyzer)
        count = await self._service.upsert(
            request.scope.tenant_id, request.scope.user_id, docs, request.version
        )
        return pb.UpsertResponse(upserted_count=count)

    async def Remove(
        self, request: pb.RemoveRequest, context: grpc.aio.ServicerContext
    ) -> pb.RemoveResponse:
        count = await self._service.remove(
            request.scope.tenant_id,
            request.scope.user_id,
            list(request.doc_ids),
            request.erase,
            request.version,
        )
        return pb.RemoveResponse(removed_count=count)

    async def ForgetUser(
        self, request: pb.ForgetUserRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetUserResponse:
        count = await self._service.forget_user(
            request.scope.tenant_id, request.scope.user_id, request.version
        )
        return pb.ForgetUserResponse(removed_count=count)

    async def Retrieve(
        self, request: pb.RetrieveRequest, context: grpc.aio.ServicerContext
    ) -> pb.RetrieveResponse:
        retrieval = await self._service.retrieve(
            request.scope.tenant_id, request.scope.user_id, request.query, mapping.caps_of(request)
        )
        return mapping.retrieve_response(retrieval)

    async def Reindex(
        self, request: pb.ReindexRequest, context: grpc.aio.ServicerContext
    ) -> pb.ReindexResponse:
        summary = await self._service.reindex(request.scope.tenant_id, request.scope.user_id)
        return mapping.reindex_response(summary)

    async def DescribeIndex(
        self, request: pb.DescribeIndexRequest, context: grpc.aio.ServicerContext
    ) -> pb.DescribeIndexResponse:
        summary = await self._service.describe(request.scope.tenant_id, request.scope.user_id)
        return mapping.describe_response(summary)
