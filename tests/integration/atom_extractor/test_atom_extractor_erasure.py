"""The erasure plans over gRPC with the engines the extractor calls, on SQLite and PostgreSQL:
the forget's local part (logs, queued effects, erasure marks) and its reach into the archive."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
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
NOW = 1_767_225_600_000_000
SECOND = 1_000_000


@pytest.fixture(params=["sqlite", "postgres"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    running = await start_in_process(ENGINES, tmp_path, storage_url=url)
    yield running
    await running.stop()


def turn(turn_id: str, text: str, now: int) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn_id,
        session_id="s1",
        role=memory_pb2.ROLE_USER,
        text=text,
        time=timestamp_of(now),
    )


async def say(
    mesh: InProcessMesh, who: scope_pb2.UserScope, turn_id: str, text: str, now: int
) -> pb.ProcessResponse:
    """Archive the turn, then extract it (as the gateway does)."""
    said = turn(turn_id, text, now)
    threads = thread_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
    await threads.AppendTurn(thread_pb.AppendTurnRequest(scope=who, turn=said))
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    return await capsule.Process(pb.ProcessRequest(scope=who, turn=said, now=timestamp_of(now)))


async def archived(mesh: InProcessMesh, who: scope_pb2.UserScope) -> str:
    threads = thread_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
    memory = await threads.GetWorkingMemory(
        thread_pb.GetWorkingMemoryRequest(scope=who, session_id="s1")
    )
    return str(memory)


async def test_forget_purges_logs_redacts_the_archive_and_holds_back_late_extractions(
    mesh: InProcessMesh,
) -> None:
    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    await say(mesh, who, "t1", "My sister Ana lives in Porto.", NOW)
    await say(mesh, who, "t2", "I play the cello.", NOW + SECOND)
    assert "Porto" in await archived(mesh, who)

    forgot = await say(mesh, who, "t3", "forget what I told you about my sister", NOW + 3 * SECOND)
    assert forgot.command == pb.COMMAND_FORGET
    assert forgot.erasure.forget_terms and "Ana" in forgot.erasure.forget_terms
    assert forgot.pending_effects == 0

    atoms = await capsule.ListAtoms(pb.ListAtomsRequest(scope=who, page_size=100))
    assert [a.key for a in atoms.atoms] == ["identity.hobby.general"]
    for _ in range(40):
        text = await archived(mesh, who)
        if "Porto" not in text and "Ana" not in text:
            break
        await asyncio.sleep(0.25)
    assert "Porto" not in text and "Ana" not in text
    assert "cello" in text

    # A turn said before the forget and extracted after it adds nothing and is on the record.
    late = await say(mesh, who, "t2b", "My sister Ana is a nurse.", NOW + 2 * SECOND)
    assert [(pb.ChangeKind.Name(c.kind), c.reason_code) for c in late.changes] == [
        ("CHANGE_KIND_DROPPED", "USER_FORGET")
    ]
    assert all(c.atom.text == "" for c in late.changes)
    rejections = await capsule.ListRejections(pb.ListRejectionsRequest(scope=who))
    assert "Ana" not in str(rejections)
    effects = await capsule.ListEffects(pb.ListEffectsRequest(scope=who))
    assert effects.dead_effects == 0


async def test_forget_everything_leaves_nothing_and_a_late_turn_adds_nothing(
    mesh: InProcessMesh,
) -> None:
    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    await say(mesh, who, "t1", "My brother Kwame is a pilot.", NOW)
    await capsule.RunCommand(
        pb.RunCommandRequest(
            scope=who,
            command=pb.COMMAND_FORGET_EVERYTHING,
            session_id="s1",
            request_id="r1",
            now=timestamp_of(NOW + 2 * SECOND),
        )
    )
    atoms = await capsule.ListAtoms(pb.ListAtomsRequest(scope=who, page_size=100))
    assert list(atoms.atoms) == []
    late = await say(mesh, who, "t0", "I'm allergic to walnuts.", NOW + SECOND)
    assert list(late.facts) == [] and list(late.changes) == []
    for _ in range(40):
        text = await archived(mesh, who)
        if "Kwame" not in text and "walnut" not in text:
            break
        await asyncio.sleep(0.25)
    assert "Kwame" not in text and "walnut" not in text
