"""The gateway over the multi-process mesh: Brief and Ingest end to end, fail-closed
answers when a Tier-1 engine is killed or hangs, and no lost extraction when the
AtomExtractor is down."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.client.gateway import GatewayClient
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
    "context_composer",
    "gateway",
]
# The RetrievalRanker is Tier 2 (test_gateway_brief_tiers.py): without it a Brief degrades.
TIER1 = ["current_state", "thread_store", "exposure_guard", "context_composer"]
NOW_US = 1_767_225_600 * 1_000_000
# Generous, so a refused connection is reported as such rather than as a budget overrun;
# a hung engine then costs this long per test.
BUDGET_MS = 800
INTERNAL_TOKEN = MeshSettings().internal_token

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    data_dir: Path = tmp_path_factory.mktemp("gateway-mesh")
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": str(BUDGET_MS),
        "MEMMESH_GATEWAY_RETRY_INITIAL_S": "0.1",
        "MEMMESH_GATEWAY_RETRY_MAX_S": "0.5",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(ENGINES, env=env) as running:
        yield running


def user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


async def brief(client: GatewayClient, user_id: str, query: str = "what is my sister called?"):  # type: ignore[no-untyped-def]
    return await client.brief(user_id, "s1", NOW_US + 60_000_000, query, mode="in_session")


async def test_ingested_fact_is_in_the_next_brief(client: GatewayClient) -> None:
    user_id = user()
    reply = await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US)
    assert reply.ok and not reply.extraction_queued
    response = await brief(client, user_id)
    assert not response.degraded, response.reason_code
    assert any("Sarah" in atom.text for atom in response.bundle.atoms)
    assert [t.turn_id for t in response.bundle.working_memory] == ["t1"]


async def test_unverified_speaker_gets_no_personal_memory(client: GatewayClient) -> None:
    user_id = user()
    await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US)
    response = await client.brief(
        user_id, "s1", NOW_US + 1, "what is my sister called?", identity_verified=False
    )
    assert response.reason_code == "IDENTITY_UNVERIFIED"
    assert not response.bundle.atoms and not response.bundle.working_memory
    assert response.bundle.temporal.now.seconds == (NOW_US + 1) // 1_000_000


async def _restart(mesh: Mesh, name: str, client: GatewayClient) -> None:
    """Start the engine again and wait until the mesh answers fully (channels of the other
    engines reconnect with a backoff), so the next test starts from a healthy mesh."""
    await asyncio.to_thread(mesh.start, [name])
    probe = user()
    for _ in range(100):
        if not (await brief(client, probe, "hello")).degraded:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the mesh did not recover after restarting {name}")


@pytest.mark.parametrize("engine", TIER1)
async def test_killed_tier1_engine_gives_empty_bundle_naming_it(
    mesh: Mesh, client: GatewayClient, engine: str
) -> None:
    user_id = user()
    await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US)
    mesh.kill(engine)
    try:
        response = await brief(client, user_id)
    finally:
        await _restart(mesh, engine, client)
    assert response.degraded
    assert response.reason_code == f"TIER1_UNAVAILABLE:{engine}"
    assert response.bundle.atoms == [] and response.bundle.working_memory == []
    assert not response.bundle.rolling_summary and not response.bundle.push.display_name


@pytest.mark.parametrize("engine", TIER1)
async def test_hung_tier1_engine_gives_empty_bundle_within_the_budget(
    mesh: Mesh, client: GatewayClient, engine: str
) -> None:
    user_id = user()
    await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US)
    mesh.pause(engine)
    try:
        started = asyncio.get_running_loop().time()
        response = await brief(client, user_id)
        elapsed_ms = (asyncio.get_running_loop().time() - started) * 1000
    finally:
        mesh.resume(engine)
        await _restart_paused(client)
    assert response.degraded and response.reason_code == "BUDGET_EXCEEDED"
    assert response.bundle.atoms == [] and response.bundle.working_memory == []
    assert elapsed_ms < BUDGET_MS + 400


async def _restart_paused(client: GatewayClient) -> None:
    probe = user()
    for _ in range(100):
        if not (await brief(client, probe, "hello")).degraded:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the mesh did not recover after a pause")


async def _atoms(mesh: Mesh, user_id: str) -> list[str]:
    channel = engine_channel(mesh.addrs["atom_extractor"], INTERNAL_TOKEN)
    try:
        stub = extractor_grpc.AtomExtractorServiceStub(channel)
        reply = await stub.ListAtoms(
            extractor_pb.ListAtomsRequest(scope={"tenant_id": "demo", "user_id": user_id})
        )
        return [atom.atom_id for atom in reply.atoms]
    finally:
        await channel.close()


async def test_ingest_with_extractor_down_is_queued_then_processed_exactly_once(
    mesh: Mesh, client: GatewayClient
) -> None:
    user_id = user()
    mesh.kill("atom_extractor")
    try:
        first = await client.ingest(
            user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US
        )
        assert first.ok and first.extraction_queued
        retried = await client.ingest(
            user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US
        )
        assert retried.ok and retried.duplicate
        assert (await client.debug_user(user_id)).pending_extractions == 1
        # The turn is archived although extraction waits: it is in working memory.
        assert [
            t.turn_id for t in (await brief(client, user_id, "hello")).bundle.working_memory
        ] == ["t1"]
    finally:
        await _restart(mesh, "atom_extractor", client)
    for _ in range(100):
        if (await client.debug_user(user_id)).pending_extractions == 0:
            break
        await asyncio.sleep(0.1)
    assert (await client.debug_user(user_id)).pending_extractions == 0
    atoms = await _atoms(mesh, user_id)
    assert len(atoms) == 1
    again = await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US)
    assert again.duplicate and not again.extraction_queued
    assert await _atoms(mesh, user_id) == atoms
