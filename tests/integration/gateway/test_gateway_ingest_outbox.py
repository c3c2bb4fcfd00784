"""Ingest is acknowledged once the turn is archived (DESIGN.md): with the RetrievalRanker
or the Ledger down the answer is still ok, and the derived effects (index, interaction
record, extraction) follow through the gateway's outbox once the engine is back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import scope_pb2
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
NOW_US = 1_767_225_600 * 1_000_000
DAY_US = 86_400 * 1_000_000
INTERNAL_TOKEN = MeshSettings().internal_token

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    data_dir: Path = tmp_path_factory.mktemp("gateway-outbox-mesh")
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        # Behaviour, not latency: a loaded machine must not turn a Brief into BUDGET_EXCEEDED.
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "3000",
        "MEMMESH_GATEWAY_RETRY_INITIAL_S": "0.1",
        "MEMMESH_GATEWAY_RETRY_MAX_S": "0.5",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(ENGINES, env=env) as running:
        yield running


def user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


async def eventually(check: Callable[[], Awaitable[bool]], timeout_s: float = 20.0) -> None:
    for _ in range(int(timeout_s / 0.2)):
        if await check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the queued effects were not delivered")


async def _atoms(mesh: Mesh, user_id: str) -> list[str]:
    channel = engine_channel(mesh.addrs["atom_extractor"], INTERNAL_TOKEN)
    try:
        stub = extractor_grpc.AtomExtractorServiceStub(channel)
        scope = scope_pb2.UserScope(tenant_id="demo", user_id=user_id)
        reply = await stub.ListAtoms(extractor_pb.ListAtomsRequest(scope=scope))
        return [atom.text for atom in reply.atoms]
    finally:
        await channel.close()


async def test_ingest_with_the_ranker_down_is_acknowledged_and_indexed_once_it_is_back(
    mesh: Mesh, client: GatewayClient
) -> None:
    user_id = user()
    mesh.kill("retrieval_ranker")
    try:
        reply = await client.ingest(
            user_id, "s1", "t1", "user", "Our parrot Kiwi sings opera every morning.", NOW_US
        )
        assert reply.ok and not reply.duplicate
    finally:
        await asyncio.to_thread(mesh.start, ["retrieval_ranker"])

    async def excerpted() -> bool:
        # A later session: the turn can only come back as an archive excerpt found in the index.
        response = await client.brief(
            user_id, "s2", NOW_US + DAY_US, "does the parrot sing opera?", mode="in_session"
        )
        return any(t.turn_id == "t1" for t in response.bundle.excerpts)

    await eventually(excerpted)


async def test_ingest_with_the_ledger_down_is_acknowledged_and_followed_through_once_it_is_back(
    mesh: Mesh, client: GatewayClient
) -> None:
    user_id = user()
    mesh.kill("ledger")
    try:
        reply = await client.ingest(
            user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US
        )
        assert reply.ok and not reply.duplicate
        # Current State records a change on the ledger first: the interaction record waits.
        assert not (await client.debug_user(user_id)).HasField("last_interaction_time")
    finally:
        await asyncio.to_thread(mesh.start, ["ledger"])

    async def followed_through() -> bool:
        debug = await client.debug_user(user_id)
        return (
            debug.pending_extractions == 0
            and debug.last_interaction_time.seconds == NOW_US // 1_000_000
        )

    await eventually(followed_through)
    assert await _atoms(mesh, user_id) == ["User has a sister named Sarah."]
    assert (await client.debug_user(user_id)).last_session_id == "s1"
