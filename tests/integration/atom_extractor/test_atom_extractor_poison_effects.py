"""A poison effect never disarms a user's privacy: an effect its peer refuses for good goes to
the dead letters with a reason, and the rule queued behind it on the same lane reaches the
ExposureGuard (real engines over gRPC, on SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import scope_pb2
from memmesh.engines.atom_extractor.adapters.sql_store import ENGINE, migrations_for
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.outbox import Effect, EffectQueue, wall_clock_us
from memmesh.runtime.timeconv import timestamp_of
from memmesh.storage.sql import open_database
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


async def test_a_poison_effect_does_not_block_the_next_rule(
    mesh: InProcessMesh, tmp_path: Path
) -> None:
    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    settings = mesh.settings
    database = await open_database(settings.storage_url, ENGINE, migrations_for, tmp_path)
    try:
        queue = EffectQueue(database)
        # A rule the ExposureGuard can never accept (its target is over the field's limit),
        # at the head of the user's guard lane.
        poison = json.dumps(
            {"kind": "DO_NOT_MENTION", "target_type": "TOPIC", "target": "x" * 5000, "now_us": NOW}
        ).encode()
        await queue.enqueue(
            who.tenant_id,
            who.user_id,
            [Effect("GUARD_RULE", poison, "poison#0", lane="guard")],
            wall_clock_us(),
        )
        capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
        await capsule.RunCommand(
            pb.RunCommandRequest(
                scope=who,
                command=pb.COMMAND_DO_NOT_MENTION,
                target="brother",
                session_id="s1",
                request_id="r1",
                now=timestamp_of(NOW),
            )
        )
        guard = guard_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
        targets: list[str] = []
        for _ in range(80):
            rules = await guard.ListRules(guard_pb.ListRulesRequest(scope=who))
            targets = [rule.target for rule in rules.rules]
            if "brother" in targets:
                break
            await asyncio.sleep(0.25)
        assert "brother" in targets
        [dead] = await queue.dead(who.tenant_id, who.user_id)
        assert dead.key == "poison#0"
        assert "INVALID_ARGUMENT" in dead.reason
        assert await queue.pending(who.tenant_id, who.user_id) == []
    finally:
        await database.close()


async def test_a_forgotten_thread_id_longer_than_a_thread_id_is_refused(
    mesh: InProcessMesh,
) -> None:
    who = scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")
    capsule = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await capsule.RunCommand(
            pb.RunCommandRequest(
                scope=who,
                command=pb.COMMAND_FORGET_THREAD,
                target="t" * 150,
                session_id="s1",
                request_id="r1",
                now=timestamp_of(NOW),
            )
        )
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "target" in (refused.value.details() or "")
