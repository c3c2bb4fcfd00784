"""The AtomExtractor's capsule as the ExposureGuard's SubjectAtoms: what a DO_NOT_MENTION
rule's target matches is read from the user's current atoms."""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.exposure_guard.domain.subject import SubjectAtom
from memmesh.runtime.errors import call_engine

ENGINE = "atom_extractor"
PAGE_SIZE = 1000
# A subject is read from at most this many atoms (the capsule's ListAtoms order).
MAX_ATOMS = 20_000


class GrpcSubjectAtoms:
    def __init__(self, stub: extractor_grpc.AtomExtractorServiceStub) -> None:
        self._stub = stub

    async def atoms(self, tenant_id: str, user_id: str) -> list[SubjectAtom]:
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        found: list[SubjectAtom] = []
        token = ""
        while len(found) < MAX_ATOMS:
            request = extractor_pb.ListAtomsRequest(
                scope=scope, page_size=PAGE_SIZE, page_token=token
            )
            page = await call_engine(ENGINE, self._stub.ListAtoms(request))
            found += [
                SubjectAtom(
                    atom.atom_id,
                    atom.key,
                    atom.text,
                    tuple(atom.topics),
                    tuple(atom.critical_tokens),
                )
                for atom in page.atoms
                if atom.status != memory_pb2.ATOM_STATUS_SUPERSEDED
            ]
            token = page.next_page_token
            if not token:
                break
        return found[:MAX_ATOMS]
