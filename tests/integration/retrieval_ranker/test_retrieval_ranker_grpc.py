"""The RetrievalRanker over gRPC, on SQLite and on PostgreSQL; Reindex against the real
capsule (AtomExtractor) and archive (ThreadStore)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as pb_grpc
from memmesh.runtime.errors import details_of
from memmesh.runtime.supervisor import free_port
from memmesh.testing.in_process import InProcessMesh, start_in_process
from memmesh.testing.scopes import new_scope
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

NOW = Timestamp(seconds=1_767_225_600)
CAPS = pb.RetrieveCaps(max_atoms=20, max_turns=2, max_digests=2)
REINDEX_ENGINES = ["ledger", "current_state", "exposure_guard", "retrieval_ranker", "thread_store", "atom_extractor"]


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    # The sources point at a closed port: Reindex must fail without touching the index.
    closed = {name: f"127.0.0.1:{free_port()}" for name in ("atom_extractor_addr", "thread_store_addr")}
    if request.param == "sqlite":
        running = await start_in_process(["retrieval_ranker"], tmp_path, **closed)
    else:
        url = request.getfixturevalue("postgres_url")
        running = await start_in_process(["retrieval_ranker"], tmp_path, storage_url=url, **closed)
    yield running
    await running.stop()


def atom_document(atom_id: str, text: str, **fields: object) -> pb.Document:
    atom = memory_pb2.Atom(atom_id=atom_id, text=text, status=memory_pb2.ATOM_STATUS_ACTIVE, **fields)  # type: ignore[arg-type]
    return pb.Document(doc_id=atom_id, kind=pb.DOCUMENT_KIND_ATOM, atom=atom)


def turn_document(turn_id: str, text: str, seconds: int) -> pb.Document:
    turn = memory_pb2.Turn(
        turn_id=turn_id, session_id="s1", role=memory_pb2.ROLE_USER, text=text, time=Timestamp(seconds=seconds)
    )
    return pb.Document(doc_id=turn_id, kind=pb.DOCUMENT_KIND_TURN, turn=turn)


def retrieve(scope: scope_pb2.UserScope, query: str) -> pb.RetrieveRequest:
    return pb.RetrieveRequest(scope=scope, query=query, now=NOW, caps=CAPS)


def ids(candidates) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.document.doc_id for c in candidates]


async def test_upsert_then_retrieve_is_read_your_writes(mesh: InProcessMesh, scope: scope_pb2.UserScope) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    assert ids((await ranker.Retrieve(retrieve(scope, "sister"))).atoms) == []
    documents = [
        atom_document("a1", "User's sister is Sarah.", key="relationship.sister", provenance=3),
        turn_document("t1", "my sister Sarah called", 100),
    ]
    reply = await ranker.Upsert(pb.UpsertRequest(scope=scope, documents=documents))
    assert reply.upserted_count == 2
    found = await ranker.Retrieve(retrieve(scope, "what is my sister called"))
    assert (ids(found.atoms), ids(found.turns)) == (["a1"], ["t1"])
    assert found.atoms[0].document.atom.key == "relationship.sister"
    assert found.atoms[0].relevance_micros > 0 and found.atoms[0].relevance_tier == 0
    assert found.turns[0].document.turn.text == "my sister Sarah called"


async def test_removed_documents_are_never_returned(mesh: InProcessMesh, scope: scope_pb2.UserScope) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    await ranker.Upsert(pb.UpsertRequest(scope=scope, documents=[atom_document("a1", "User likes tea.")]))
    assert (await ranker.Remove(pb.RemoveRequest(scope=scope, doc_ids=["a1", "nope"]))).removed_count == 1
    assert ids((await ranker.Retrieve(retrieve(scope, "tea"))).atoms) == []
    assert ids((await ranker.Retrieve(retrieve(scope, "what do you remember"))).atoms) == []


async def test_voice_lock_keeps_users_apart(mesh: InProcessMesh, scope: scope_pb2.UserScope) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    await ranker.Upsert(pb.UpsertRequest(scope=scope, documents=[atom_document("a1", "User likes tea.")]))
    same_user_other_tenant = scope_pb2.UserScope(tenant_id=scope.tenant_id + "x", user_id=scope.user_id)
    for other in (new_scope(), same_user_other_tenant):
        reply = await ranker.Retrieve(retrieve(other, "tea"))
        assert ids(reply.atoms) == ids(reply.turns) == []
        assert (await ranker.Remove(pb.RemoveRequest(scope=other, doc_ids=["a1"]))).removed_count == 0
    assert ids((await ranker.Retrieve(retrieve(scope, "tea"))).atoms) == ["a1"]


async def test_a_document_whose_source_id_differs_is_invalid(mesh: InProcessMesh, scope: scope_pb2.UserScope) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    bad = atom_document("a1", "User likes tea.")
    bad.doc_id = "a2"
    for documents, field in (([bad], "documents[0].doc_id"), ([atom_document("a1", "x")] * 2, "documents[1].doc_id")):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await ranker.Upsert(pb.UpsertRequest(scope=scope, documents=documents))
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert details_of(raised.value)[1] == [field]


async def test_reindex_with_unreachable_sources_fails_and_keeps_the_index(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    await ranker.Upsert(pb.UpsertRequest(scope=scope, documents=[atom_document("a1", "User likes tea.")]))
    before = await ranker.DescribeIndex(pb.DescribeIndexRequest(scope=scope))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await ranker.Reindex(pb.ReindexRequest(scope=scope))
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert details_of(raised.value)[0] == "DEPENDENCY_FAILED"
    assert await ranker.DescribeIndex(pb.DescribeIndexRequest(scope=scope)) == before
    assert (before.document_count, before.atom_count) == (1, 1)


async def test_reindex_from_capsule_and_archive_equals_the_incremental_index(
    tmp_path: Path, scope: scope_pb2.UserScope
) -> None:
    mesh = await start_in_process(REINDEX_ENGINES, tmp_path)
    try:
        ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
        threads = thread_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
        extractor = extractor_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
        said = [
            "My sister's name is Sarah.",
            "I prefer tea over coffee.",
            "I work as a nurse in Lisbon.",
            "We went hiking on Saturday, it was great.",
        ]
        for n, text in enumerate(said):
            turn = memory_pb2.Turn(
                turn_id=f"turn-{n}", session_id="s1", role=memory_pb2.ROLE_USER, text=text,
                time=Timestamp(seconds=NOW.seconds + n),
            )
            appended = await threads.AppendTurn(thread_pb.AppendTurnRequest(scope=scope, turn=turn))
            # As the gateway does on Ingest: the archived turn is indexed with its archived
            # exposure, then extraction upserts atoms.
            turn.exposure = appended.exposure
            await ranker.Upsert(pb.UpsertRequest(scope=scope, documents=[pb.Document(
                doc_id=turn.turn_id, kind=pb.DOCUMENT_KIND_TURN, text=turn.text, turn=turn, time=turn.time)]))
            await extractor.Process(extractor_pb.ProcessRequest(scope=scope, turn=turn, now=turn.time))
        live = await ranker.DescribeIndex(pb.DescribeIndexRequest(scope=scope))
        assert live.turn_count == len(said) and live.atom_count >= 1
        queries = ["what is my sister called", "tea or coffee", "where do I work", "what do you remember about me"]
        before = [await ranker.Retrieve(retrieve(scope, q)) for q in queries]

        rebuilt = await ranker.Reindex(pb.ReindexRequest(scope=scope))
        assert (rebuilt.checksum, rebuilt.document_count) == (live.checksum, live.document_count)
        assert [await ranker.Retrieve(retrieve(scope, q)) for q in queries] == before
        assert ids(before[0].atoms) and ids(before[0].turns) == ["turn-0"]
    finally:
        await mesh.stop()
