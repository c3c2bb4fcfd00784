"""Seed 001 §2.17 Q17 (memory quality measurement harness) over real engine processes: the
§2.12 metrics of the labelled fixtures in fixtures/quality, replayed through the gateway."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.quality.evaluate import evaluate_fixture, measured_totals
from memmesh.quality.fixtures import Fixture, load_fixture, load_fixtures
from memmesh.quality.measurement import COUNTER_FIELDS, MAX_EVENT_BYTES, encode_event
from memmesh.quality.replay import MEASUREMENT_LOG, TENANT, quality_mesh, replay
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "quality"
SIX_METRICS = {
    "wrong_recall_rate",
    "redundancy_rate",
    "retrieval_precision",
    "retrieval_recall_proxy",
    "memory_caused_correction_rate",
    "invasiveness_triggers",
}
EVENT_CODES = {"kind", "reason_code"}
EVENT_FLAGS = {"authoritative", "degraded"}
EVENT_COUNTS = {
    *COUNTER_FIELDS,
    "version",
    "working_memory_count",
    "degraded_parts_count",
}


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mesh, Path]]:
    """A mesh whose gateway logs measurement events, and its data directory."""
    data_dir = tmp_path_factory.mktemp("q17-measured")
    with quality_mesh(data_dir, measurement=True) as mesh:
        yield mesh, data_dir


@pytest.fixture(scope="module")
def unmeasured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mesh, Path]]:
    """The same mesh with measurement off."""
    data_dir = tmp_path_factory.mktemp("q17-unmeasured")
    with quality_mesh(data_dir, measurement=False) as mesh:
        yield mesh, data_dir


def fixtures() -> list[Fixture]:
    loaded = load_fixtures(FIXTURES)
    assert {f.name for f in loaded} >= {"counts", "everyday"}
    return loaded


async def test_at_q17_mem_metrics_stable(measured: tuple[Mesh, Path]) -> None:
    mesh, data_dir = measured
    for fixture in fixtures():
        runs = [
            await evaluate_fixture(
                mesh, data_dir / MEASUREMENT_LOG, fixture, f"stable-{fixture.name}-{n}"
            )
            for n in range(2)
        ]
        first, second = (r.metrics.as_dict() for r in runs)
        assert SIX_METRICS <= set(first), fixture.name
        assert first == second, fixture.name
        assert measured_totals(runs[0].events) == measured_totals(runs[1].events)
        # Not the same numbers by luck: each run answered every Brief, each logged its own.
        briefs = sum(step.kind == "brief" for step in fixture.steps)
        assert all(len(r.replay.responses) == len(r.events) == briefs for r in runs)


async def test_at_q17_mem_metrics_counts(measured: tuple[Mesh, Path]) -> None:
    mesh, data_dir = measured
    fixture = load_fixture(FIXTURES / "counts.json")
    result = await evaluate_fixture(mesh, data_dir / MEASUREMENT_LOG, fixture, "counts-user")
    # Hand count, Brief by Brief (the fixture's steps 4, 5, 6 and 8):
    # - step 4, "what is my name?" after a device restore: the name atom, the sister atom and
    #   the turn "My name is Dana." (2 of 3 useful), and the one restore question, about the
    #   name the user already stated: a redundant question;
    # - step 5, dinner: the peanut atom and two excerpts, peanuts and the divorce (2 of 3
    #   useful; the needed peanut fact is found);
    # - step 6, the sister's birthday: the peanut atom, the sister atom, the sister turn and
    #   the peanut turn (a birthday is an event the allergy matters to, so the allergy's
    #   words are looked for too: 2 of 4 useful; the needed sister fact is found); step 7
    #   corrects the sister, which step 6 recalled twice: two wrong recalls, one
    #   memory-caused correction;
    # - step 8, "how was my year?": only the divorce turn (not useful); step 9 objects to
    #   it and step 10 asks not to mention it: one invasiveness trigger (one recall event).
    assert result.metrics.as_dict() == {
        "briefs": 4,
        "corrections": 1,
        "invasiveness_triggers": 1,
        "memory_caused_correction_rate": round(1 / 6, 4),
        "memory_caused_corrections": 1,
        "needed": 2,
        "needed_found": 2,
        "questions": 1,
        "redundancy_rate": 0.25,
        "redundant_questions": 1,
        "retrieval_precision": round(6 / 11, 4),
        "retrieval_recall_proxy": 1.0,
        "retrieved_items": 11,
        "useful_items": 6,
        "user_turns": 6,
        "wrong_recall_rate": round(2 / 11, 4),
        "wrong_recalls": 2,
    }
    totals = measured_totals(result.events)
    # The gateway's own counters agree with the hand count: 5 atoms + 6 excerpts, 1 question.
    assert (
        totals["events"],
        totals["atoms_selected_count"],
        totals["excerpts_selected_count"],
    ) == (4, 5, 6)
    assert totals["clarification_due_to_memory_count"] == 1
    assert totals["do_not_mention_hits_count"] == 0


def _scope(user_id: str) -> scope_pb2.UserScope:
    return scope_pb2.UserScope(tenant_id=TENANT, user_id=user_id)


async def stored_state(mesh: Mesh, user_id: str) -> dict[str, object]:
    """What the mesh stored for a user: capsule, Current State and the ledger's events (their
    kinds and codes, sorted: hashes are made under a random per-user key, and engines append
    through their own outboxes, so the interleaving of their events varies between meshes)."""
    token = MeshSettings().internal_token
    scope = _scope(user_id)
    async with engine_channel(mesh.addrs["atom_extractor"], token, 5.0) as channel:
        atoms = await extractor_grpc.AtomExtractorServiceStub(channel).ListAtoms(
            extractor_pb.ListAtomsRequest(scope=scope, page_size=1000)
        )
    async with engine_channel(mesh.addrs["current_state"], token, 5.0) as channel:
        state = await state_grpc.CurrentStateServiceStub(channel).Get(
            state_pb.GetRequest(scope=scope)
        )
    # The ledger position of the state's last change moves with that same interleaving.
    state.state.ClearField("ledger_sequence")
    async with engine_channel(mesh.addrs["ledger"], token, 5.0) as channel:
        events = [
            (r.event.event_type, r.event.reason_code)
            async for r in ledger_grpc.LedgerServiceStub(channel).Read(
                ledger_pb.ReadRequest(scope=scope)
            )
        ]
    return {
        "atoms": [a.SerializeToString(deterministic=True) for a in atoms.atoms],
        "state": state.SerializeToString(deterministic=True),
        "ledger": sorted(events),
    }


async def test_at_q17_mem_metrics_nonauthoritative(
    measured: tuple[Mesh, Path], unmeasured: tuple[Mesh, Path]
) -> None:
    (on, on_dir), (off, off_dir) = measured, unmeasured
    log_path = on_dir / MEASUREMENT_LOG
    for fixture in fixtures():
        user_id = f"same-user-{fixture.name}"
        before = log_path.read_bytes().splitlines() if log_path.exists() else []
        with_measurement = await replay(on, fixture, user_id)
        lines = log_path.read_bytes().splitlines()[len(before) :]
        without = await replay(off, fixture, user_id)
        # Every bundle, byte for byte, and the stored state are the same with and without.
        assert with_measurement.responses.keys() == without.responses.keys()
        for step, response in with_measurement.responses.items():
            assert response.SerializeToString(deterministic=True) == without.responses[
                step
            ].SerializeToString(deterministic=True), f"{fixture.name} step {step}"
        stored_on, stored_off = await stored_state(on, user_id), await stored_state(off, user_id)
        assert stored_on["atoms"] and stored_on["ledger"]
        assert stored_on == stored_off, fixture.name
        # One event per Brief, counts and codes only, non-authoritative, at most 1 KB.
        assert len(lines) == len(with_measurement.responses)
        said = [s.text for s in fixture.steps if s.kind != "command"]
        words = {w.lower() for text in said for w in re.findall(r"[A-Za-z]{4,}", text)}
        for line in lines:
            assert len(line) + 1 <= MAX_EVENT_BYTES
            event = json.loads(line)
            assert set(event) == EVENT_CODES | EVENT_FLAGS | EVENT_COUNTS
            assert event["authoritative"] is False and event["kind"] == "MEMORY_MEASUREMENT"
            assert all(type(event[k]) is int for k in EVENT_COUNTS)
            assert all(type(event[k]) is bool for k in EVENT_FLAGS)
            assert re.fullmatch(r"[A-Z_]*", event["reason_code"])
            assert encode_event(event) == line + b"\n"
            # The keys are fixed names; no value holds a word of the conversation or an id.
            values = " ".join(str(v) for v in event.values()).lower()
            assert user_id not in values and TENANT not in values
            assert not [w for w in words if w in values], line
    assert not (off_dir / MEASUREMENT_LOG).exists()
