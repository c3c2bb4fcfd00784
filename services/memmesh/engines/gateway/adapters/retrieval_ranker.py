"""RetrievalRanker, as the gateway calls it (every call through call_engine)."""

from __future__ import annotations

import grpc

from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.errors import call_engine

ENGINE = "retrieval_ranker"


class RetrievalRankerClient:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = ranker_grpc.RetrievalRankerServiceStub(channel)

    async def upsert(self, request: ranker_pb.UpsertRequest, timeout_s: float) -> ranker_pb.UpsertResponse:
        return await call_engine(ENGINE, self._stub.Upsert(request, timeout=timeout_s))
