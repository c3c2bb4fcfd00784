"""Patterns learned from repeated requests through the real AtomExtractor over gRPC, with the
engines it calls, on SQLite and PostgreSQL: requests over several conversations become a
USER_PATTERN atom with its evidence turns, fewer become a logged proposal, and "forget
everything" leaves no observation behind."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.in_process import InProcessMesh, start_in_process
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
]
DAY = 86_400_000_000
HOUR = 3_600_000_000
# 2026-01-05 19:00 UTC, a Monday evening.
EVENING = 1_767_639_600_000_000


@pytest.fixture(params=["sqlite", "postgres"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    running = await start_in_process(ENGINES, tmp_path, storage_url=url)
    yield running
    await running.stop()


@pytest.fixture
async def capsule_store(mesh: InProcessMesh, tmp_path: Path) -> AsyncIterator[SqlCapsuleStore]:
    """The engine's own database, opened beside it to read what it keeps."""
    url = mesh.settings.storage_url
    files = sorted(tmp_path.rglob("atom_extractor.sqlite3"))
    data_dir = files[0].parent if url == "sqlite" else tmp_path
    store = await SqlCapsuleStore.open(url, data_dir)
    yield store
    await store.close()


async def say(
    mesh: InProcessMesh,
    who: scope_pb2.UserScope,
    turn_id: str,
    session_id: str,
    text: str,
    now: int,
) -> pb.ProcessResponse:
    """Archive the turn, then extract it (as the gateway does)."""
    said = memory_pb2.Turn(
        turn_id=turn_id,
        session_id=session_id,
        role=memory_pb2.ROLE_USER,
        text=text,
        time=timestamp_of(now),
    )
    threads = thread_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
    await threads.AppendTurn(thread_pb.AppendTurnRequest(scope=who, turn=said))
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    response: pb.ProcessResponse = await capsule.Process(
        pb.ProcessRequest(scope=who, turn=said, now=timestamp_of(now))
    )
    return response


async def test_requests_over_conversations_become_a_pattern_and_forget_everything_drops_them(
    mesh: InProcessMesh, capsule_store: SqlCapsuleStore
) -> None:
    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    evenings = ("play some lo-fi", "can you play some lo-fi music?", "put on some lo-fi please")
    last = pb.ProcessResponse()
    for day, text in enumerate(evenings):
        at = EVENING + day * DAY
        # The weather is asked on the mornings of the first two conversations only.
        if day < 2:
            await say(
                mesh, who, f"w{day}", f"s{day}", "what's the weather in Lyon?", at - 11 * HOUR
            )
        await say(mesh, who, f"chat{day}", f"s{day}", "I had a long day at work", at - HOUR)
        last = await say(mesh, who, f"lofi{day}", f"s{day}", text, at)
    # Said in the second conversation, extracted late: it rolls no pattern back in time.
    await say(mesh, who, "w2", "s1", "how's the weather in Lyon today", EVENING + DAY - 10 * HOUR)

    created = [
        c
        for c in last.changes
        if c.kind == pb.CHANGE_KIND_CREATED and c.atom.type == memory_pb2.ATOM_TYPE_USER_PATTERN
    ]
    assert [c.reason_code for c in created] == ["PATTERN_LEARNED"]
    atoms = await capsule.ListAtoms(pb.ListAtomsRequest(scope=who, page_size=100))
    (pattern,) = [a for a in atoms.atoms if a.type == memory_pb2.ATOM_TYPE_USER_PATTERN]
    assert pattern.text == "User often asks to play lo-fi in the evening."
    assert pattern.key == "preference.pattern.play_lo-fi"
    assert pattern.provenance == memory_pb2.PROVENANCE_INFERRED
    assert pattern.confidence_bp == 9000
    assert list(pattern.evidence_turn_ids) == ["lofi0", "lofi1", "lofi2"]

    # Three weather questions in two conversations: a proposal, logged and not applied.
    rejections = await capsule.ListRejections(pb.ListRejectionsRequest(scope=who))
    (proposal,) = [r for r in rejections.rejections if r.reason_code == "pattern_proposal"]
    assert proposal.candidate_text == "User often asks about weather in Lyon in the morning."
    assert proposal.confidence_bp == 7500 and proposal.turn_id == "w2"

    kept = await capsule_store.observations(who.tenant_id, who.user_id)
    assert sorted(o.turn_id for o in kept) == ["lofi0", "lofi1", "lofi2", "w0", "w1", "w2"]
    assert all("long day" not in f"{o.label} {o.signature}" for o in kept)

    forgot = await say(mesh, who, "bye", "s3", "forget everything", EVENING + 3 * DAY)
    assert forgot.command == pb.COMMAND_FORGET_EVERYTHING
    assert await capsule_store.observations(who.tenant_id, who.user_id) == []
    atoms = await capsule.ListAtoms(pb.ListAtomsRequest(scope=who, page_size=100))
    assert list(atoms.atoms) == []
    rejections = await capsule.ListRejections(pb.ListRejectionsRequest(scope=who))
    assert list(rejections.rejections) == []
    # One more request after the forget is a first observation, not a pattern.
    again = await say(mesh, who, "lofi3", "s4", "play some lo-fi", EVENING + 4 * DAY)
    assert list(again.changes) == []
    assert [o.turn_id for o in await capsule_store.observations(who.tenant_id, who.user_id)] == [
        "lofi3"
    ]
