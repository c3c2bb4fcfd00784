"""The RetrievalRanker over gRPC, on SQLite and on PostgreSQL; Reindex rebuilds from what
the owners pushed (the ThreadStore its turns, the AtomExtractor its atoms)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.retrieval_ranker.adapters.sql_store import SqlRankerStore
from memmesh.engines.retrieval_ranker.ports import StoredDoc
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as pb_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.errors import details_of
from memmesh.testing.in_process import InProcessMesh, start_in_process
from memmesh.testing.scopes import new_scope
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

NOW = Timestamp(seconds=1_767_225_600)
CAPS = pb.RetrieveCaps(max_atoms=20, max_turns=2, max_digests=2)
REINDEX_ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
]


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    if request.param == "sqlite":
        running = await start_in_process(["retrieval_ranker"], tmp_path)
        running.storage = ("sqlite", tmp_path)  # type: ignore[attr-defined]
    else:
        url = request.getfixturevalue("postgres_url")
        running = await start_in_process(["retrieval_ranker"], tmp_path, storage_url=url)
        running.storage = (url, tmp_path)  # type: ignore[attr-defined]
    yield running
    await running.stop()


def atom_document(atom_id: str, text: str, **fields: object) -> pb.Document:
    atom = memory_pb2.Atom(
        atom_id=atom_id, text=text, status=memory_pb2.ATOM_STATUS_ACTIVE, **fields
    )  # type: ignore[arg-type]
    return pb.Document(atom=atom)


def turn_document(turn_id: str, text: str, seconds: int) -> pb.Document:
    turn = memory_pb2.Turn(
        turn_id=turn_id,
        session_id="s1",
        role=memory_pb2.ROLE_USER,
        text=text,
        time=Timestamp(seconds=seconds),
    )
    return pb.Document(turn=turn)


def retrieve(scope: scope_pb2.UserScope, query: str) -> pb.RetrieveRequest:
    return pb.RetrieveRequest(scope=scope, query=query, now=NOW, caps=CAPS)


def ids(candidates) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.doc_id for c in candidates]


async def test_upsert_then_retrieve_is_read_your_writes(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
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


async def test_removed_documents_are_never_returned(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    await ranker.Upsert(
        pb.UpsertRequest(scope=scope, documents=[atom_document("a1", "User likes tea.")])
    )
    assert (
        await ranker.Remove(pb.RemoveRequest(scope=scope, doc_ids=["a1", "nope"]))
    ).removed_count == 1
    assert ids((await ranker.Retrieve(retrieve(scope, "tea"))).atoms) == []
    assert ids((await ranker.Retrieve(retrieve(scope, "what do you remember"))).atoms) == []


async def test_voice_lock_keeps_users_apart(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    await ranker.Upsert(
        pb.UpsertRequest(scope=scope, documents=[atom_document("a1", "User likes tea.")])
    )
    same_user_other_tenant = scope_pb2.UserScope(
        tenant_id=scope.tenant_id + "x", user_id=scope.user_id
    )
    for other in (new_scope(), same_user_other_tenant):
        reply = await ranker.Retrieve(retrieve(other, "tea"))
        assert ids(reply.atoms) == ids(reply.turns) == []
        assert (
            await ranker.Remove(pb.RemoveRequest(scope=other, doc_ids=["a1"]))
        ).removed_count == 0
    assert ids((await ranker.Retrieve(retrieve(scope, "tea"))).atoms) == ["a1"]


async def test_a_document_needs_one_source_with_its_id_once(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    secret = turn_document("t9", "a secret", 5)
    secret.turn.exposure = memory_pb2.EXPOSURE_INTERNAL_ONLY
    cases = (
        ([pb.Document()], "documents[0].source"),
        ([atom_document("", "User likes tea.")], "documents[0].atom"),
        ([atom_document("a1", "x")] * 2, "documents[1].atom"),
        ([secret], "documents[0].turn.exposure"),
    )
    for documents, field in cases:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await ranker.Upsert(pb.UpsertRequest(scope=scope, documents=documents))
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert details_of(raised.value)[1] == [field]


async def test_a_failed_reindex_keeps_the_index(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    await ranker.Upsert(
        pb.UpsertRequest(scope=scope, documents=[atom_document("a1", "User likes tea.")])
    )
    before = await ranker.DescribeIndex(pb.DescribeIndexRequest(scope=scope))
    # A stored document that can no longer be rebuilt (written around the API).
    url, data_dir = mesh.storage  # type: ignore[attr-defined]
    store = await SqlRankerStore.open(url, data_dir)
    try:
        await store.upsert(
            scope.tenant_id, scope.user_id, [StoredDoc("broken", 1, b"\xff\xff\xff")]
        )
        with pytest.raises(grpc.aio.AioRpcError):
            await ranker.Reindex(pb.ReindexRequest(scope=scope))
        assert [d.doc_id for d in (await store.load(scope.tenant_id, scope.user_id)).docs] == [
            "a1",
            "broken",
        ]
        await store.remove(scope.tenant_id, scope.user_id, ["broken"])
    finally:
        await store.close()
    assert await ranker.DescribeIndex(pb.DescribeIndexRequest(scope=scope)) == before
    assert (before.document_count, before.atom_count) == (1, 1)


async def test_reindex_of_what_the_owners_pushed_equals_the_live_index(
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
                turn_id=f"turn-{n}",
                session_id="s1",
                role=memory_pb2.ROLE_USER,
                text=text,
                time=Timestamp(seconds=NOW.seconds + n),
            )
            # The ThreadStore indexes the turn it archives; the extraction indexes its atoms.
            await threads.AppendTurn(thread_pb.AppendTurnRequest(scope=scope, turn=turn))
            await extractor.Process(
                extractor_pb.ProcessRequest(scope=scope, turn=turn, now=turn.time)
            )
        live = await ranker.DescribeIndex(pb.DescribeIndexRequest(scope=scope))
        assert live.turn_count == len(said) and live.atom_count >= 1
        queries = [
            "what is my sister called",
            "tea or coffee",
            "where do I work",
            "what do you remember about me",
        ]
        before = [await ranker.Retrieve(retrieve(scope, q)) for q in queries]

        rebuilt = await ranker.Reindex(pb.ReindexRequest(scope=scope))
        assert (rebuilt.checksum, rebuilt.document_count) == (live.checksum, live.document_count)
        assert [await ranker.Retrieve(retrieve(scope, q)) for q in queries] == before
        assert ids(before[0].atoms) and ids(before[0].turns) == ["turn-0"]
    finally:
        await mesh.stop()


async def test_a_retrieve_is_answered_while_a_large_upsert_is_still_being_embedded(
    mesh: InProcessMesh,
) -> None:
    """A turn's vector comes from the sentence encoder (about 1.5 ms each): a batch of hundreds
    is embedded off the event loop, so another user's Retrieve does not wait for all of it."""
    ranker = pb_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    asking, writing = new_scope(), new_scope()
    await ranker.Upsert(
        pb.UpsertRequest(
            scope=asking, documents=[turn_document("t1", "the tomatoes in my garden", 10)]
        )
    )
    batch = [
        turn_document(f"b{n}", f"we planted the bed of herbs number {n} by the fence", n)
        for n in range(600)
    ]
    # On a channel of its own with a long deadline: embedding 600 turns takes seconds on a
    # slow host, and what is tested is that the Retrieve does not wait for it.
    patient = engine_channel(
        mesh.settings.addr_of("retrieval_ranker"), mesh.settings.internal_token, 120.0
    )
    mesh.channels.append(patient)  # closed with the mesh's own
    writer = pb_grpc.RetrievalRankerServiceStub(patient)
    upsert = asyncio.ensure_future(writer.Upsert(pb.UpsertRequest(scope=writing, documents=batch)))
    await asyncio.sleep(0.05)
    answer = await ranker.Retrieve(retrieve(asking, "how is my garden"))
    assert ids(answer.turns) == ["t1"]
    assert not upsert.done()
    assert (await upsert).upserted_count == 600
