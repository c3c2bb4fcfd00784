"""The index source over gRPC: the capsule (AtomExtractor.ListAtoms) and the archive
(ThreadStore.ListArchive), both read page by page."""

from __future__ import annotations

from collections.abc import AsyncIterator

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as atom_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as atom_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.domain.documents import IndexDoc
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.runtime.errors import call_engine
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

ATOM_PAGE_SIZE = 1000
ARCHIVE_PAGE_SIZE = 5000


class GrpcIndexSource:
    """Reads every atom, turn and digest of a user from the engines that own them."""

    def __init__(
        self,
        atoms: atom_grpc.AtomExtractorServiceStub,
        archive: thread_grpc.ThreadStoreServiceStub,
        analyzer: Analyzer,
    ) -> None:
        self._atoms = atoms
        self._archive = archive
        self._analyzer = analyzer

    async def documents(self, tenant_id: str, user_id: str) -> AsyncIterator[IndexDoc]:
        """Every document of the user; a peer's failure is a DependencyFailed naming it."""
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        token = ""
        while True:
            page = await call_engine(
                "atom_extractor",
                self._atoms.ListAtoms(atom_pb.ListAtomsRequest(scope=scope, page_size=ATOM_PAGE_SIZE, page_token=token)),
            )
            for atom in page.atoms:
                yield mapping.index_doc(mapping.document_of_atom(atom), self._analyzer)
            if not (token := page.next_page_token):
                break
        token = ""
        while True:
            archive = await call_engine(
                "thread_store",
                self._archive.ListArchive(
                    thread_pb.ListArchiveRequest(scope=scope, page_size=ARCHIVE_PAGE_SIZE, page_token=token)
                ),
            )
            for turn in archive.turns:
                # An INTERNAL_ONLY turn must never become an excerpt: it is not indexed.
                if turn.exposure != memory_pb2.EXPOSURE_INTERNAL_ONLY:
                    yield mapping.index_doc(mapping.document_of_turn(turn), self._analyzer)
            for digest in (*archive.digests, *archive.episodes):
                yield mapping.index_doc(mapping.document_of_digest(digest), self._analyzer)
            if not (token := archive.next_page_token):
                break
