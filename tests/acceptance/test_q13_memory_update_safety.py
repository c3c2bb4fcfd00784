"""Seed 001 §2.17 Q13 (memory update safety + correction pairs) over gRPC against real engine processes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
]
NOW = 1_767_225_600_000_000
DAY = 86_400_000_000
# The fixed deltas per reason the capsule applies (engine reasons.py).
CONFIRM_DELTA_BP, CONFLICT_DELTA_BP, CORRECTION_DELTA_BP = 500, -1500, 1000


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    data_dir: Path = tmp_path_factory.mktemp("q13")
    running = Mesh(
        ENGINES, env={"MEMMESH_DATA_DIR": str(data_dir), "MEMMESH_STORAGE_URL": "sqlite"}
    )
    running.start()
    yield running
    running.stop()


@dataclass
class Client:
    capsule: pb_grpc.AtomExtractorServiceStub
    ledger: ledger_grpc.LedgerServiceStub
    scope: scope_pb2.UserScope
    turns: int = 0

    async def say(
        self, text: str, now: int = NOW, turn_id: str | None = None
    ) -> pb.ProcessResponse:
        self.turns += 1
        turn = memory_pb2.Turn(
            turn_id=turn_id or f"turn-{self.turns}",
            session_id="session-1",
            role=memory_pb2.ROLE_USER,
            text=text,
            time=timestamp_of(now),
        )
        return await self.capsule.Process(
            pb.ProcessRequest(scope=self.scope, turn=turn, now=timestamp_of(now))
        )

    async def atoms(self) -> list[memory_pb2.Atom]:
        return list((await self.capsule.ListAtoms(pb.ListAtomsRequest(scope=self.scope))).atoms)

    async def events(self) -> list[ledger_pb.LedgerEvent]:
        return [
            reply.event async for reply in self.ledger.Read(ledger_pb.ReadRequest(scope=self.scope))
        ]


@pytest.fixture
async def client(mesh: Mesh) -> AsyncIterator[Client]:
    token = MeshSettings().internal_token
    channels = [
        engine_channel(mesh.addrs[name], token, 5.0) for name in ("atom_extractor", "ledger")
    ]
    scope = scope_pb2.UserScope(tenant_id="q13", user_id=f"u-{uuid.uuid4().hex[:12]}")
    yield Client(
        pb_grpc.AtomExtractorServiceStub(channels[0]),
        ledger_grpc.LedgerServiceStub(channels[1]),
        scope,
    )
    for channel in channels:
        await channel.close()


def kinds(response: pb.ProcessResponse | pb.ConfirmAtomResponse) -> list[tuple[str, str]]:
    return [(pb.ChangeKind.Name(c.kind), c.reason_code) for c in response.changes]


async def test_at_q13_mem_correction_pair_capture(client: Client) -> None:
    await client.say("I'm going to visit my sister Sarah in Chicago next week.")
    [before] = await client.atoms()
    corrected = await client.say("No, I said Sandra, not Sarah.", turn_id="turn-fix")
    assert corrected.command == pb.COMMAND_CORRECTION
    assert (corrected.correction.heard, corrected.correction.meant) == ("Sarah", "Sandra")
    # Exactly one atom update, reason-coded, with the fixed delta.
    assert kinds(corrected) == [("CHANGE_KIND_CORRECTED", "USER_CORRECTION")]
    assert corrected.changes[0].confidence_delta_bp == CORRECTION_DELTA_BP
    [after] = await client.atoms()
    assert after.atom_id == before.atom_id and after.version == before.version + 1
    assert after.text == "User has a sister named Sandra." and list(after.critical_tokens) == [
        "Sandra"
    ]
    pairs = (
        await client.capsule.ListCorrections(pb.ListCorrectionsRequest(scope=client.scope))
    ).corrections
    assert [(p.correction.heard, p.correction.meant, p.turn_id) for p in pairs] == [
        ("Sarah", "Sandra", "turn-fix")
    ]
    # A retried turn neither duplicates the pair nor updates the atom again.
    retried = await client.say("No, I said Sandra, not Sarah.", turn_id="turn-fix")
    assert retried.duplicate and not retried.changes
    assert (
        len(
            (
                await client.capsule.ListCorrections(pb.ListCorrectionsRequest(scope=client.scope))
            ).corrections
        )
        == 1
    )
    events = [e.event_type for e in await client.events()]
    assert events.count("ATOM_CORRECTED") == 1 and events.count("CORRECTION_CAPTURED") == 1
    # Correction artifacts are per user.
    other = pb.ListCorrectionsRequest(
        scope=scope_pb2.UserScope(tenant_id="q13", user_id=f"u-{uuid.uuid4().hex[:12]}")
    )
    assert not (await client.capsule.ListCorrections(other)).corrections


async def test_at_q13_mem_critical_token_confirm(client: Client) -> None:
    await client.say("My wife is named Anna.")
    held = await client.say("My wife is named Hannah.")
    assert kinds(held) == [("CHANGE_KIND_CONFLICT", "CRITICAL_TOKEN_CHANGED")] * 2
    atoms = {a.text: a for a in await client.atoms()}
    anna, hannah = atoms["User's wife is Anna."], atoms["User's wife is Hannah."]
    assert anna.status == hannah.status == memory_pb2.ATOM_STATUS_CONFLICT
    assert anna.conflict_atom_id == hannah.atom_id and hannah.conflict_atom_id == anna.atom_id
    # The user confirms one value (the answer to the one clarification question).
    confirmed = await client.capsule.ConfirmAtom(
        pb.ConfirmAtomRequest(
            scope=client.scope,
            atom_id=hannah.atom_id,
            turn_id="turn-confirm",
            now=timestamp_of(NOW + 1),
        )
    )
    assert kinds(confirmed) == [
        ("CHANGE_KIND_CONFIRMED", "USER_CONFIRMED"),
        ("CHANGE_KIND_SUPERSEDED", "CONFLICT_RESOLVED"),
    ]
    after = {a.atom_id: a for a in await client.atoms()}
    assert after[hannah.atom_id].status == memory_pb2.ATOM_STATUS_ACTIVE
    assert after[hannah.atom_id].provenance == memory_pb2.PROVENANCE_VERIFIED
    assert after[anna.atom_id].status == memory_pb2.ATOM_STATUS_SUPERSEDED
    # A verified name is not replaced by one more ambiguous turn either.
    again = await client.say("My wife is named Johanna.")
    assert all(kind == "CHANGE_KIND_CONFLICT" for kind, _ in kinds(again))
    assert (await client.capsule.ListAtoms(pb.ListAtomsRequest(scope=client.scope))).atoms


async def test_at_q13_mem_confidence_deltas(mesh: Mesh, client: Client) -> None:
    async def run(offset: int) -> list[tuple[str, str, int]]:
        client.scope = scope_pb2.UserScope(tenant_id="q13", user_id=f"u-{uuid.uuid4().hex[:12]}")
        responses = [
            await client.say("My wife is named Anna.", NOW + offset),
            await client.say("My wife is named Anna.", NOW + offset + DAY),
            await client.say("My wife is named Hannah.", NOW + offset + 2 * DAY),
            await client.say("No, I said Hannah, not Anna.", NOW + offset + 3 * DAY),
        ]
        return [
            (pb.ChangeKind.Name(c.kind), c.reason_code, c.confidence_delta_bp)
            for r in responses
            for c in r.changes
        ]

    first = await run(0)
    assert first == [
        ("CHANGE_KIND_CREATED", "USER_STATED", 9000),
        ("CHANGE_KIND_CONFIRMED", "REPEATED_STATEMENT", CONFIRM_DELTA_BP),
        ("CHANGE_KIND_CONFLICT", "CRITICAL_TOKEN_CHANGED", CONFLICT_DELTA_BP),
        ("CHANGE_KIND_CONFLICT", "CRITICAL_TOKEN_CHANGED", CONFLICT_DELTA_BP),
        ("CHANGE_KIND_CORRECTED", "USER_CORRECTION", CORRECTION_DELTA_BP),
        ("CHANGE_KIND_SUPERSEDED", "CONFLICT_RESOLVED", 0),
    ]
    # The same turns 90 days later give the same deltas: confidence never depends on time.
    assert await run(90 * DAY) == first
    deltas = {
        (e.event_type, e.reason_code): next(
            a.int_value for a in e.attributes if a.name == "confidence_delta_bp"
        )
        for e in await client.events()
        if e.event_type.startswith("ATOM_")
    }
    assert deltas[("ATOM_CONFIRMED", "REPEATED_STATEMENT")] == CONFIRM_DELTA_BP
    assert deltas[("ATOM_CORRECTED", "USER_CORRECTION")] == CORRECTION_DELTA_BP


async def test_at_q13_mem_no_silent_overwrite(client: Client) -> None:
    await client.say("I live in Boston.")
    changed = await client.say("I live in Denver now.")
    assert {kind for kind, _ in kinds(changed)} == {"CHANGE_KIND_CONFLICT"}
    texts = {a.text: memory_pb2.AtomStatus.Name(a.status) for a in await client.atoms()}
    assert texts == {
        "User lives in Boston.": "ATOM_STATUS_CONFLICT",
        "User lives in Denver.": "ATOM_STATUS_CONFLICT",
    }
    # Every change is on the ledger with a reason code and ids, never the fact's text.
    events = [e for e in await client.events() if e.event_type.startswith("ATOM_")]
    assert [e.event_type for e in events] == ["ATOM_CREATED", "ATOM_CONFLICT", "ATOM_CONFLICT"]
    assert all(e.reason_code for e in events)
    assert not any("Boston" in str(e) or "Denver" in str(e) for e in events)
    # A value without critical tokens is superseded, visibly and with a reason code.
    await client.say("My favorite color is blue.")
    superseded = await client.say("My favorite color is green.")
    assert kinds(superseded) == [
        ("CHANGE_KIND_SUPERSEDED", "VALUE_CHANGED"),
        ("CHANGE_KIND_CREATED", "VALUE_CHANGED"),
    ]
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.capsule.Correct(
            pb.CorrectRequest(
                scope=client.scope,
                correction=pb.Correction(heard="Boston", meant="boston"),
                turn_id="t-x",
                now=timestamp_of(NOW),
            )
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
