"""The RetrievalRanker as the composer's Ranker (Tier 2: the bundle goes without pulled
atoms, excerpts and digests)."""

from __future__ import annotations

from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.adapters.calls import scope_of, tier2_timeout
from memmesh.engines.context_composer.domain.model import Retrieved
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of


class GrpcRanker:
    def __init__(
        self, stub: ranker_grpc.RetrievalRankerServiceStub, default_timeout_s: float
    ) -> None:
        self._stub = stub
        self._default_timeout_s = default_timeout_s

    async def retrieve(
        self,
        tenant_id: str,
        user_id: str,
        query: str,
        now_us: int,
        max_atoms: int,
        max_turns: int,
        max_digests: int,
    ) -> Retrieved:
        request = ranker_pb.RetrieveRequest(
            scope=scope_of(tenant_id, user_id),
            query=query,
            now=timestamp_of(now_us),
            caps=ranker_pb.RetrieveCaps(
                max_atoms=max_atoms, max_turns=max_turns, max_digests=max_digests
            ),
        )
        call = self._stub.Retrieve(request, timeout=tier2_timeout(self._default_timeout_s))
        return mapping.retrieved_of(await call_engine("retrieval_ranker", call))
