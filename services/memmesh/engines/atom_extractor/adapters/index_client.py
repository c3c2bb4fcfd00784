"""The RetrievalRanker's index as the AtomExtractor's IndexPort: it sends its atoms as they are."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.atom_extractor.domain.capsule import AtomRecord
from memmesh.engines.atom_extractor.mapping import atom_message, scope_message
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as index_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as index_grpc
from memmesh.runtime.errors import call_engine


class GrpcIndex:
    def __init__(self, stub: index_grpc.RetrievalRankerServiceStub) -> None:
        self._stub = stub

    async def upsert(self, tenant_id: str, user_id: str, atoms: Sequence[AtomRecord]) -> None:
        # The ranker builds the indexed form from the atom itself.
        documents = [index_pb.Document(atom=atom_message(atom)) for atom in atoms]
        request = index_pb.UpsertRequest(
            scope=scope_message(tenant_id, user_id), documents=documents
        )
        await call_engine("retrieval_ranker", self._stub.Upsert(request))

    async def remove(self, tenant_id: str, user_id: str, atom_ids: Sequence[str]) -> None:
        request = index_pb.RemoveRequest(
            scope=scope_message(tenant_id, user_id), doc_ids=list(atom_ids)
        )
        await call_engine("retrieval_ranker", self._stub.Remove(request))

    async def forget_user(self, tenant_id: str, user_id: str) -> None:
        request = index_pb.ForgetUserRequest(scope=scope_message(tenant_id, user_id))
        await call_engine("retrieval_ranker", self._stub.ForgetUser(request))
