"""Erasure in the RetrievalRanker on SQLite and PostgreSQL: ForgetUser removes every document
of the user from the store and from every process's in-memory index (two services over one
store stand for two processes), and an erasing Remove leaves no byte of the removed
documents in the SQLite files (main file and WAL)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.common.v1 import memory_pb2
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.adapters.sql_store import SqlRankerStore
from memmesh.engines.retrieval_ranker.domain.documents import Caps, IndexDoc
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb

CAPS = Caps(20, 20, 20)
ANALYZER = Analyzer()


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqlRankerStore]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = await SqlRankerStore.open(url, tmp_path)
    yield opened
    await opened.close()


def _who() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


def _atom(doc_id: str, text: str) -> IndexDoc:
    document = pb.Document(atom=memory_pb2.Atom(atom_id=doc_id, text=text))
    return mapping.index_doc(mapping.canonical_document(document), ANALYZER)


def _service(store: SqlRankerStore) -> RankerService:
    return RankerService(store, ANALYZER, mapping.DocumentCodec(ANALYZER))


async def test_forget_user_empties_the_store_and_every_cached_index(store: SqlRankerStore) -> None:
    first, second = _service(store), _service(store)
    who, other = _who(), _who()
    for user in (who, other):
        await first.upsert(
            *user, [_atom("a1", "User's sister lives in Porto."), _atom("a2", "User likes tea.")]
        )
    # Both processes hold the user's index in memory.
    for service in (first, second):
        assert len((await service.retrieve(*who, "porto tea", CAPS)).atoms) == 2

    assert await first.forget_user(*who) == 2
    for service in (first, second):
        assert (await service.retrieve(*who, "porto tea", CAPS)).atoms == ()
        assert (await service.describe(*who)).document_count == 0
        assert len((await service.retrieve(*other, "porto tea", CAPS)).atoms) == 2
    assert (await store.load(*who)).docs == []
    # Idempotent, and the user can start again.
    assert await second.forget_user(*who) == 0
    await second.upsert(*who, [_atom("a3", "User likes coffee.")])
    assert [c.doc.doc_id for c in (await first.retrieve(*who, "coffee", CAPS)).atoms] == ["a3"]


async def test_an_erasing_remove_leaves_no_bytes_of_the_documents_in_the_sqlite_files(
    tmp_path: Path,
) -> None:
    store = await SqlRankerStore.open("sqlite", tmp_path)
    try:
        service, who = _service(store), _who()
        secret = "Zq" + uuid.uuid4().hex[:10]
        await service.upsert(
            *who, [_atom("a1", f"User's doctor is {secret}."), _atom("a2", "User likes tea.")]
        )
        files = sorted(tmp_path.glob("retrieval_ranker.sqlite3*"))
        assert any(secret.encode() in path.read_bytes() for path in files)
        assert await service.remove(*who, ["a1"], erase=True) == 1
        files = sorted(tmp_path.glob("retrieval_ranker.sqlite3*"))
        assert [p.name for p in files if secret.encode() in p.read_bytes()] == []
        assert [c.doc.doc_id for c in (await service.retrieve(*who, "tea", CAPS)).atoms] == ["a2"]
    finally:
        await store.close()
