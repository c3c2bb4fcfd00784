"""The retrieval index holds copies of archived turns and digests: forgetting a thread
removes them there too, before the archive forgets them (so a retry can still find them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import grpc

from memmesh.common.v1 import scope_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.errors import DependencyFailed

# RetrievalRanker.Remove takes at most 1,000 ids a call.
REMOVE_BATCH = 1000


class DerivedIndex(Protocol):
    async def remove(self, tenant_id: str, user_id: str, doc_ids: Sequence[str]) -> None:
        """Remove documents; idempotent."""
        ...


class GrpcDerivedIndex:
    def __init__(self, stub: ranker_grpc.RetrievalRankerServiceStub) -> None:
        self._stub = stub

    async def remove(self, tenant_id: str, user_id: str, doc_ids: Sequence[str]) -> None:
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        for start in range(0, len(doc_ids), REMOVE_BATCH):
            batch = list(doc_ids[start : start + REMOVE_BATCH])
            try:
                await self._stub.Remove(ranker_pb.RemoveRequest(scope=scope, doc_ids=batch))
            except grpc.aio.AioRpcError as error:
                raise DependencyFailed(
                    "retrieval index unavailable; forget not complete", metadata={"engine": "retrieval_ranker"}
                ) from error
