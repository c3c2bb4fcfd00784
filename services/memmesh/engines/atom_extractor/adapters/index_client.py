"""The RetrievalRanker's index as the AtomExtractor's IndexPort."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.atom_extractor.domain.capsule import AtomRecord
from memmesh.engines.atom_extractor.mapping import atom_message, scope_message
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as index_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as index_grpc
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of


class GrpcIndex:
    def __init__(self, stub: index_grpc.RetrievalRankerServiceStub) -> None:
        self._stub = stub

    async def upsert(self, tenant_id: str, user_id: str, atoms: Sequence[AtomRecord]) -> None:
        documents = [
            index_pb.Document(
                doc_id=atom.atom_id,
                kind=index_pb.DOCUMENT_KIND_ATOM,
                text=atom.text,
                atom=atom_message(atom),
                evidence_turn_ids=list(atom.evidence_turn_ids),
                time=timestamp_of(atom.create_time_us),
            )
            for atom in atoms
        ]
        request = index_pb.UpsertRequest(scope=scope_message(tenant_id, user_id), documents=documents)
        await call_engine("retrieval_ranker", self._stub.Upsert(request))

    async def remove(self, tenant_id: str, user_id: str, atom_ids: Sequence[str]) -> None:
        request = index_pb.RemoveRequest(scope=scope_message(tenant_id, user_id), doc_ids=list(atom_ids))
        await call_engine("retrieval_ranker", self._stub.Remove(request))
