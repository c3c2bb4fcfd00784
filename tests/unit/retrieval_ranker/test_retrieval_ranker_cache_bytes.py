"""The ranker's cached user indexes are bounded in bytes: an index's estimate follows its
documents and dense vectors, and the least recently used users leave memory first."""

from __future__ import annotations

import gc

from ranker_fakes import TENANT, MemoryRankerStore, atom

from memmesh.embedding.static import DIMENSIONS, default_static_encoder
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.domain.documents import Caps, IndexDoc
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import UserIndex
from memmesh.engines.retrieval_ranker.ports import Snapshot
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb

ANALYZER = Analyzer(default_static_encoder())
CAPS = Caps(max_atoms=20, max_turns=5, max_digests=5)


def _docs(count: int, prefix: str = "a") -> list[IndexDoc]:
    return [
        mapping.index_doc(
            pb.Document(atom=atom(f"{prefix}{n}", f"User likes tea number {n}.")), ANALYZER
        )
        for n in range(count)
    ]


class CountingStore(MemoryRankerStore):  # type: ignore[misc]  # the fakes module is untyped here
    """Counts full loads: a user read again from the store had left the cache."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []

    async def load(self, tenant_id: str, user_id: str) -> Snapshot:
        self.loads.append(user_id)
        snapshot: Snapshot = await super().load(tenant_id, user_id)
        return snapshot


def test_an_index_estimate_counts_documents_and_vectors_and_returns_after_removal() -> None:
    empty = UserIndex(1)
    docs = _docs(300)
    index = UserIndex(1, docs[:200])
    grown = index.approximate_bytes()
    assert grown > empty.approximate_bytes()
    # One int8 row a document.
    assert index.dense_bytes() >= 200 * DIMENSIONS
    for doc in docs[200:]:
        index.upsert(doc)
    for doc in docs[200:]:
        index.remove(doc.doc_id)
    # Same documents, same estimate, bar the dense matrix's spare rows (kept for growth).
    assert (
        index.approximate_bytes() - index.dense_bytes()
        == grown - UserIndex(1, docs[:200]).dense_bytes()
    )
    index.upsert(docs[0])  # replacing a document does not count it twice
    assert (
        index.approximate_bytes() - index.dense_bytes()
        == grown - UserIndex(1, docs[:200]).dense_bytes()
    )


async def _room_for_two_of_three_users() -> tuple[CountingStore, RankerService]:
    """Three users of 50 documents each in a store, and a service with room for two."""
    one_user = UserIndex(1, _docs(50)).approximate_bytes()
    store = CountingStore()
    writer = RankerService(store, ANALYZER, mapping.DocumentCodec(ANALYZER))
    for user in ("u1", "u2", "u3"):
        await writer.upsert(TENANT, user, _docs(50))
    service = RankerService(
        store, ANALYZER, mapping.DocumentCodec(ANALYZER), max_cache_bytes=one_user * 5 // 2
    )
    return store, service


async def test_users_beyond_the_byte_bound_leave_memory_least_recently_used_first() -> None:
    store, service = await _room_for_two_of_three_users()
    for user in ("u1", "u2", "u3", "u3", "u2", "u1"):
        await service.retrieve(TENANT, user, "tea", CAPS)
    # u1 left when u3 came in; u2 and u3 stayed; u1 was read again.
    assert store.loads == ["u1", "u2", "u3", "u1"]


def test_cached_documents_add_almost_nothing_for_the_garbage_collector_to_walk() -> None:
    # Every full collection walks every tracked object: a ranker holding tens of thousands
    # of documents must not add one per document or per shared term, or each pass stalls
    # every call it serves. Here 4 users' 2,000 documents share 4 x 104 terms of two or more
    # postings each; only the users' own few containers are added.
    docs = [
        mapping.index_doc(
            pb.Document(atom=atom(f"u{user}-{n}", f"User likes tea number {n % 100}.")),
            ANALYZER,
        )
        for user in range(4)
        for n in range(500)
    ]
    gc.collect()
    before = len(gc.get_objects())
    indexes = [UserIndex() for _ in range(4)]
    for doc in docs:
        indexes[int(doc.doc_id[1])].upsert(doc)  # "u<user>-<n>"
    for user, index in enumerate(indexes):
        assert index.remove(f"u{user}-7")  # postings are also taken out in place
    gc.collect()
    added = len(gc.get_objects()) - before
    assert sum(index.count() for index in indexes) == 1_996
    assert added < 100, added


async def test_a_forgotten_user_frees_their_bytes_for_the_users_still_cached() -> None:
    store, service = await _room_for_two_of_three_users()
    for user in ("u1", "u2"):
        await service.retrieve(TENANT, user, "tea", CAPS)
    await service.forget_user(TENANT, "u1")
    # u1's bytes left with u1: u3 fits beside u2, and neither is read again.
    for user in ("u3", "u2", "u3"):
        await service.retrieve(TENANT, user, "tea", CAPS)
    assert store.loads == ["u1", "u2", "u3"]
