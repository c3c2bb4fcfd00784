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


async def _capsule_bytes(
    mesh: InProcessMesh, tmp_path: Path, engine: str = "atom_extractor"
) -> str:
    """Everything an engine's database holds: on SQLite the file and its WAL byte for
    byte (free pages included), on PostgreSQL every row of every table of its schema."""
    url = mesh.settings.storage_url
    if not url.startswith("postgres"):
        files = sorted(tmp_path.rglob(f"{engine}.sqlite3*"))
        assert files
        return "\n".join(f.read_bytes().decode("utf-8", "replace") for f in files)
    import psycopg

    seen: list[str] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        tables = await connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (engine,)
        )
        for (table,) in await tables.fetchall():
            rows = await connection.execute(f'SELECT t::text FROM "{engine}"."{table}" t')
            seen += [str(row[0]) for row in await rows.fetchall()]
    return "\n".join(seen)


@pytest.mark.parametrize("command", ["spoken", "Command"])
async def test_a_forgotten_fact_leaves_no_word_in_any_table_of_the_capsule(
    mesh: InProcessMesh, tmp_path: Path, command: str
) -> None:
    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    await say(mesh, who, "t1", "I play the cello.", NOW)
    await say(
        mesh, who, "t2", "I'm visiting my aunt Xuqtikebee in Xuqparu next month.", NOW + SECOND
    )
    assert "Xuqtikebee" in await _capsule_bytes(mesh, tmp_path)
    if command == "spoken":
        forgot = await say(mesh, who, "t3", "Please delete that.", NOW + 2 * SECOND)
        assert forgot.command == pb.COMMAND_FORGET
    else:
        await capsule.RunCommand(
            pb.RunCommandRequest(
                scope=who,
                command=pb.COMMAND_FORGET,
                session_id="s1",
                request_id="r1",
                now=timestamp_of(NOW + 2 * SECOND),
            )
        )
    for _ in range(40):
        text = await archived(mesh, who)
        if "Xuqtikebee" not in text and "Xuqparu" not in text:
            break
        await asyncio.sleep(0.25)
    # The turn "that" points at goes whole: the place the extractor kept no fact of, too.
    assert "Xuqtikebee" not in text and "Xuqparu" not in text and "cello" in text
    words = ("Xuqtikebee", "xuqtikebee", "Xuqparu", "xuqparu")
    for _ in range(40):  # the store reclaims the deleted bytes in the background
        stored = await _capsule_bytes(mesh, tmp_path)
        if not any(word in stored for word in words):
            break
        await asyncio.sleep(0.25)
    for word in words:
        assert word not in stored
    assert "cello" in stored  # what was not forgotten is still there


async def test_do_not_store_by_command_refuses_a_later_turn_on_its_subject(
    mesh: InProcessMesh, tmp_path: Path
) -> None:
    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    await capsule.RunCommand(
        pb.RunCommandRequest(
            scope=who,
            command=pb.COMMAND_DO_NOT_STORE,
            target="password",
            session_id="s1",
            request_id="r1",
            now=timestamp_of(NOW),
        )
    )
    out = await say(mesh, who, "t1", "My wifi password is Zebra77. I play the cello.", NOW + SECOND)
    assert list(out.facts) == []
    for _ in range(40):
        archive = await _capsule_bytes(mesh, tmp_path, "thread_store")
        if "Zebra77" not in archive:
            break
        await asyncio.sleep(0.25)
    # The sentence on the subject leaves the archive; the rest of the turn stays.
    assert "Zebra77" not in archive and "I play the cello." in archive
    for _ in range(40):
        stored = await _capsule_bytes(mesh, tmp_path)
        if "Zebra77" not in stored:
            break
        await asyncio.sleep(0.25)
    assert "Zebra77" not in stored


async def test_forget_everything_forgets_the_profile_in_current_state(
    mesh: InProcessMesh,
) -> None:
    from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
    from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc

    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    state = state_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    await state.Apply(
        state_pb.ApplyRequest(
            scope=who,
            change=state_pb.StateChange(set_display_name="Ottilie"),
            any_version=True,
            reason_code="USER_REQUEST",
            idempotency_key="name",
            now=timestamp_of(NOW),
        )
    )
    await state.Apply(
        state_pb.ApplyRequest(
            scope=who,
            change=state_pb.StateChange(set_timezone="Europe/Lisbon"),
            any_version=True,
            reason_code="USER_REQUEST",
            idempotency_key="tz",
            now=timestamp_of(NOW),
        )
    )
    out = await say(mesh, who, "t1", "Please forget everything about me.", NOW + SECOND)
    assert out.command == pb.COMMAND_FORGET_EVERYTHING
    for _ in range(40):
        got = (await state.Get(state_pb.GetRequest(scope=who))).state
        if not got.profile.display_name:
            break
        await asyncio.sleep(0.25)
    assert got.profile.display_name == "" and got.profile.timezone == ""
    assert got.version > 0  # the state goes on: the forget is on its record
    rebuilt = await state.Rebuild(state_pb.RebuildRequest(scope=who))
    assert rebuilt.checksum == rebuilt.live_checksum
