"""The AtomExtractor over gRPC with the engines it calls, in process, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from test_atom_extractor_semantic_provider import GOOD_FACT

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as index_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as index_grpc
from memmesh.runtime.errors import details_of
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.fake_provider import FakeProvider, envelope
from memmesh.testing.in_process import InProcessMesh, start_in_process

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
]
NOW = 1_767_225_600_000_000


@pytest.fixture(params=["sqlite", "postgres"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    running = await start_in_process(ENGINES, tmp_path, storage_url=url)
    yield running
    await running.stop()


def scope() -> scope_pb2.UserScope:
    return scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")


def process(who: scope_pb2.UserScope, turn_id: str, text: str, now: int = NOW) -> pb.ProcessRequest:
    turn = memory_pb2.Turn(
        turn_id=turn_id,
        session_id="s1",
        role=memory_pb2.ROLE_USER,
        text=text,
        time=timestamp_of(now),
    )
    return pb.ProcessRequest(scope=who, turn=turn, now=timestamp_of(now))


async def test_new_atoms_are_indexed_and_forgotten_ones_removed(mesh: InProcessMesh) -> None:
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    index = index_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
    who = scope()
    created = await capsule.Process(process(who, "t1", "I prefer tea over coffee."))
    atom_id = created.changes[0].atom.atom_id
    retrieve = index_pb.RetrieveRequest(
        scope=who, query="tea", now=timestamp_of(NOW), caps=index_pb.RetrieveCaps(max_atoms=5)
    )
    [candidate] = (await index.Retrieve(retrieve)).atoms
    assert candidate.document.atom.atom_id == atom_id and candidate.document.atom.version == 1
    forgot = await capsule.Forget(
        pb.ForgetRequest(
            scope=who, atom_ids=[atom_id], now=timestamp_of(NOW + 1), reason_code="USER_FORGET"
        )
    )
    assert list(forgot.forgotten_atom_ids) == [atom_id]
    assert not (await index.Retrieve(retrieve)).atoms


async def test_pages_of_atoms_and_a_bad_page_token(mesh: InProcessMesh) -> None:
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    who = scope()
    for number, text in enumerate(["I love jazz.", "I hate cilantro.", "I am left-handed."]):
        await capsule.Process(process(who, f"t{number}", text))
    first = await capsule.ListAtoms(pb.ListAtomsRequest(scope=who, page_size=2))
    rest = await capsule.ListAtoms(
        pb.ListAtomsRequest(scope=who, page_size=2, page_token=first.next_page_token)
    )
    keys = [a.key for a in [*first.atoms, *rest.atoms]]
    assert keys == sorted(keys) and len(keys) == 3 and not rest.next_page_token
    with pytest.raises(grpc.aio.AioRpcError) as bad:
        await capsule.ListAtoms(pb.ListAtomsRequest(scope=who, page_token="not-a-token"))
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and details_of(bad.value)[1] == [
        "page_token"
    ]


async def test_rejections_are_logged_per_user(mesh: InProcessMesh) -> None:
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    who = scope()
    response = await capsule.Process(process(who, "t1", "I kind of like jazz maybe."))
    logged = (await capsule.ListRejections(pb.ListRejectionsRequest(scope=who))).rejections
    assert [r.reason_code for r in logged] == [r.reason_code for r in response.rejections]
    assert not (await capsule.ListRejections(pb.ListRejectionsRequest(scope=scope()))).rejections


async def test_semantic_mode_records_provenance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = FakeProvider()
    provider.script = lambda body: (
        200,
        envelope(json.dumps({"relevant": True, "facts": [GOOD_FACT]})),
        0.0,
    )
    monkeypatch.setenv("MEMMESH_ATOM_EXTRACTOR_MODE", "semantic_with_fallback")
    monkeypatch.setenv("MEMMESH_ATOM_EXTRACTOR_PROVIDER_BASE_URL", provider.url)
    monkeypatch.setenv("MEMMESH_ATOM_EXTRACTOR_PROVIDER_MODELS", "model-a")
    running = await start_in_process(ENGINES, tmp_path)
    try:
        capsule = pb_grpc.AtomExtractorServiceStub(running.channel("atom_extractor"))
        who = scope()
        done = await capsule.Process(
            process(who, "t1", "I'm going to visit my sister Sarah in Chicago next week.")
        )
        assert done.changes[0].atom.provenance == memory_pb2.PROVENANCE_TOOL_DERIVED
        [record] = (await capsule.ListProvenance(pb.ListProvenanceRequest(scope=who))).records
        assert (record.turn_id, record.model, record.fallback_used, record.attempts) == (
            "t1",
            "model-a",
            False,
            1,
        )
        provider.script = lambda body: (500, "{}", 0.0)
        await capsule.Process(process(who, "t2", "I love jazz."))
        newest = (await capsule.ListProvenance(pb.ListProvenanceRequest(scope=who))).records[0]
        assert newest.fallback_used and newest.fallback_reason == "provider_error"
    finally:
        await running.stop()
        provider.close()
