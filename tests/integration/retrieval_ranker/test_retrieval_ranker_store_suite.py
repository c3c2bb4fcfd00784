"""One contract suite for the ranker's storage port, on SQLite and on PostgreSQL, plus the
service over each real store (two processes sharing one store)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.common.v1 import memory_pb2
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.adapters.sql_store import SqlRankerStore
from memmesh.engines.retrieval_ranker.domain.documents import Caps
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.ports import Changes, RankerStore, StoredDoc
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[RankerStore, RankerStore]]:
    """Two stores over one database, as two processes of the engine hold them."""
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    first: RankerStore = await SqlRankerStore.open(url, tmp_path)
    second: RankerStore = await SqlRankerStore.open(url, tmp_path)
    yield first, second
    await second.close()
    await first.close()


@pytest.fixture
def store(stores: tuple[RankerStore, RankerStore]) -> RankerStore:
    return stores[0]


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


def doc(doc_id: str, payload: bytes = b"p", kind: int = 1) -> StoredDoc:
    return StoredDoc(doc_id, kind, payload)


async def test_unknown_user_is_empty_at_generation_zero(store: RankerStore) -> None:
    who = user()
    assert await store.generation(*who) == 0
    snapshot = await store.load(*who)
    assert (snapshot.generation, snapshot.docs) == (0, [])
    assert await store.changes_since(*who, 0) == Changes(0, [], [])


async def test_every_write_raises_the_generation_and_load_returns_the_documents(
    store: RankerStore,
) -> None:
    who = user()
    assert await store.upsert(*who, [doc("b", b"2"), doc("a", b"\x00\xff")]) == (["b", "a"], 1)
    assert await store.upsert(*who, [doc("a", b"3", kind=2)]) == (["a"], 2)
    snapshot = await store.load(*who)
    assert snapshot.generation == 2
    assert snapshot.docs == [doc("a", b"3", kind=2), doc("b", b"2")]


async def test_a_document_comes_back_with_what_was_derived_from_it(store: RankerStore) -> None:
    who = user()
    written = StoredDoc("a", 1, b"payload", 0, b"\x01\x7f\x80", "1.abc term other term")
    await store.upsert(*who, [written, doc("b")])
    assert (await store.load(*who)).docs == [written, doc("b")]
    assert await store.changes_since(*who, 0) == Changes(1, [written, doc("b")], [])


async def test_changes_since_lists_writes_and_removals_after_a_generation(
    store: RankerStore,
) -> None:
    who = user()
    await store.upsert(*who, [doc("a"), doc("b"), doc("c")])
    await store.upsert(*who, [doc("b", b"new")])
    removed, generation = await store.remove(*who, ["c", "missing"])
    assert (removed, generation) == (["c"], 3)
    assert await store.changes_since(*who, 1) == Changes(3, [doc("b", b"new")], ["c"])
    assert await store.changes_since(*who, 3) == Changes(3, [], [])
    await store.upsert(*who, [doc("c", b"back")])
    assert await store.changes_since(*who, 3) == Changes(4, [doc("c", b"back")], [])


async def test_remove_deletes_the_documents(store: RankerStore) -> None:
    who = user()
    await store.upsert(*who, [doc("a"), doc("b")])
    removed, _ = await store.remove(*who, ["a", "b", "a"])
    assert removed == ["a", "b"]
    assert (await store.load(*who)).docs == []
    assert (await store.remove(*who, ["a"]))[0] == []


async def test_replace_all_swaps_the_documents_and_forces_a_full_load(store: RankerStore) -> None:
    who = user()
    await store.upsert(*who, [doc("a"), doc("b")])
    await store.remove(*who, ["b"])
    generation = await store.replace_all(*who, [doc("x"), doc("y")])
    assert generation == 3
    assert await store.changes_since(*who, 2) is None
    assert await store.changes_since(*who, 3) == Changes(3, [], [])
    assert (await store.load(*who)).docs == [doc("x"), doc("y")]


async def test_replace_all_if_generation_changes_nothing_once_a_write_landed(
    store: RankerStore,
) -> None:
    who = user()
    await store.upsert(*who, [doc("a")])
    await store.upsert(*who, [doc("b")])
    assert await store.replace_all(*who, [doc("a")], if_generation=1) is None
    assert (await store.load(*who)).docs == [doc("a"), doc("b")]
    assert await store.replace_all(*who, [doc("a")], if_generation=2) == 3
    assert (await store.load(*who)).docs == [doc("a")]


async def test_concurrent_writers_of_one_user_each_get_their_own_generation(
    stores: tuple[RankerStore, RankerStore],
) -> None:
    who = user()
    writes = (stores[n % 2].upsert(*who, [doc(f"d{n}")]) for n in range(8))
    generations = [generation for _, generation in await asyncio.gather(*writes)]
    assert sorted(generations) == list(range(1, 9))
    snapshot = await stores[1].load(*who)
    assert (snapshot.generation, len(snapshot.docs)) == (8, 8)
    last_two = sorted(f"d{n}" for n, generation in enumerate(generations) if generation > 6)
    assert await stores[0].changes_since(*who, 6) == Changes(
        8, [doc(doc_id) for doc_id in last_two], []
    )


async def test_users_are_isolated(store: RankerStore) -> None:
    first, second = user(), user()
    await store.upsert(*first, [doc("a")])
    await store.remove(*second, ["a"])
    assert (await store.load(*first)).docs == [doc("a")]
    assert (await store.load(*second)).docs == []
    assert await store.generation(*first) == 1


async def test_two_processes_over_one_store_read_each_others_writes(store: RankerStore) -> None:
    analyzer = Analyzer()
    first, second = (
        RankerService(store, analyzer, mapping.DocumentCodec(analyzer)) for _ in range(2)
    )
    who, caps = user(), Caps(20, 5, 0)

    def atom_doc(doc_id: str, text: str):  # type: ignore[no-untyped-def]
        return mapping.index_doc(
            mapping.canonical_document(
                pb.Document(atom=memory_pb2.Atom(atom_id=doc_id, text=text))
            ),
            analyzer,
        )

    await first.upsert(*who, [atom_doc("a1", "User likes tea.")])
    assert [c.doc.doc_id for c in (await second.retrieve(*who, "tea", caps)).atoms] == ["a1"]
    await second.upsert(*who, [atom_doc("a2", "User likes iced tea.")])
    await second.remove(*who, ["a1"])
    assert [c.doc.doc_id for c in (await first.retrieve(*who, "tea", caps)).atoms] == ["a2"]
    assert await first.describe(*who) == await second.describe(*who)


def versioned(doc_id: str, payload: bytes, version: int) -> StoredDoc:
    return StoredDoc(doc_id, 2, payload, version)


async def test_an_older_versioned_upsert_never_replaces_a_newer_document(
    store: RankerStore,
) -> None:
    who = user()
    assert (await store.upsert(*who, [versioned("t1", b"redacted", 5)]))[0] == ["t1"]
    # A late delivery of an earlier change (a retry, or a call applied after its timeout).
    written, generation = await store.upsert(*who, [versioned("t1", b"forgotten words", 3)])
    assert written == [] and generation == 1
    assert (await store.load(*who)).docs == [versioned("t1", b"redacted", 5)]
    # The same version again (a retry of the same change) and a newer one are taken.
    assert (await store.upsert(*who, [versioned("t1", b"redacted", 5)]))[0] == ["t1"]
    assert (await store.upsert(*who, [versioned("t1", b"newer", 6)]))[0] == ["t1"]


async def test_a_versioned_removal_keeps_a_tombstone_an_older_upsert_cannot_pass(
    store: RankerStore,
) -> None:
    who = user()
    await store.upsert(*who, [versioned("t1", b"words", 2)])
    # The removal arrives first for t2: its upsert (older) is still on its way.
    removed, _ = await store.remove(*who, ["t1", "t2"], version=4)
    assert removed == ["t1"]
    assert (await store.upsert(*who, [versioned("t1", b"words", 2)]))[0] == []
    assert (await store.upsert(*who, [versioned("t2", b"late", 3)]))[0] == []
    assert (await store.load(*who)).docs == []
    # The change that removed them may index them again in its own version, or a later one.
    assert (await store.upsert(*who, [versioned("t1", b"kept part", 4)]))[0] == ["t1"]
    # A late delivery of that same removal leaves what its own change indexed.
    assert (await store.remove(*who, ["t1"], version=4))[0] == []
    assert (await store.load(*who)).docs == [versioned("t1", b"kept part", 4)]
    # Unversioned writes keep the old rules.
    assert (await store.upsert(*who, [StoredDoc("a1", 1, b"atom")]))[0] == ["a1"]
    assert (await store.remove(*who, ["a1"]))[0] == ["a1"]


async def test_a_rebuild_keeps_versions_and_tombstones(store: RankerStore) -> None:
    who = user()
    await store.upsert(*who, [versioned("t1", b"words", 7)])
    await store.remove(*who, ["t2"], version=7)
    snapshot = await store.load(*who)
    assert await store.replace_all(*who, snapshot.docs, if_generation=snapshot.generation)
    assert (await store.upsert(*who, [versioned("t1", b"old", 6)]))[0] == []
    assert (await store.upsert(*who, [versioned("t2", b"old", 6)]))[0] == []
    assert (await store.load(*who)).docs == [versioned("t1", b"words", 7)]


async def test_an_upsert_older_than_the_users_forgetting_is_refused(store: RankerStore) -> None:
    who = user()
    await store.upsert(*who, [versioned("t1", b"words", 3)])
    assert await store.forget_user(*who, version=9) == 1
    assert (await store.upsert(*who, [versioned("t1", b"words", 3)]))[0] == []
    assert (await store.upsert(*who, [versioned("t9", b"words", 9)]))[0] == []
    assert (await store.load(*who)).docs == []
    assert (await store.upsert(*who, [versioned("t10", b"new", 10)]))[0] == ["t10"]
    # A user never written: the forgetting is still remembered.
    other = user()
    assert await store.forget_user(*other, version=4) == 0
    assert (await store.upsert(*other, [versioned("t1", b"late", 2)]))[0] == []
