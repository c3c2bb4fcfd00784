"""Seed 003 tiers over the multi-process mesh: with the RetrievalRanker killed or hung in
the middle of a conversation, a Brief still answers every Tier-1 part (push memory,
temporal authority, working memory, rolling summary, active loops) and names the ranker
in degraded_parts; graph entities near the ones a turn names come back filtered."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memmesh.client.gateway import GatewayClient
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
BUDGET_MS = 800
INTERNAL_TOKEN = MeshSettings().internal_token

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    data_dir: Path = tmp_path_factory.mktemp("gateway-tiers")
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": str(BUDGET_MS),
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(ENGINES, env=env) as running:
        yield running


async def conversation(client: GatewayClient) -> str:
    """A user who said their name, a fact and a commitment, and got answers."""
    user_id = f"u-{uuid.uuid4().hex[:10]}"
    turns = [
        ("user", "My name is Dana. I have a sister named Sarah and she lives in Portland."),
        ("assistant", "Nice, Portland is lovely."),
        ("user", "I need to book the dentist this week."),
        ("assistant", "I will remind you about the dentist."),
    ]
    for index, (role, text) in enumerate(turns):
        reply = await client.ingest(
            user_id, "s1", f"t{index}", role, text, NOW_US + index * 1_000_000
        )
        assert reply.ok
    return user_id


async def brief(client: GatewayClient, user_id: str, query: str = "how is Sarah doing?"):  # type: ignore[no-untyped-def]
    return await client.brief(user_id, "s1", NOW_US + 60_000_000, query, mode="in_session")


def assert_tier1_parts(response) -> None:  # type: ignore[no-untyped-def]
    bundle = response.bundle
    assert [t.turn_id for t in bundle.working_memory] == ["t0", "t1", "t2", "t3"]
    assert bundle.rolling_summary
    assert any("dentist" in loop.text for loop in bundle.active_loops)
    assert bundle.temporal.now.seconds == (NOW_US + 60_000_000) // 1_000_000
    assert bundle.temporal.last_interaction_time.seconds == (NOW_US + 3_000_000) // 1_000_000
    assert bundle.push.display_name == "Dana"


async def recovered(client: GatewayClient) -> None:
    for _ in range(100):
        if not (await client.brief(f"u-{uuid.uuid4().hex[:10]}", "s1", NOW_US, "hello")).degraded:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the mesh did not recover")


async def test_a_whole_brief_carries_atoms_entities_and_every_tier1_part(
    client: GatewayClient,
) -> None:
    user_id = await conversation(client)
    response = await brief(client, user_id)
    assert not response.degraded, response.reason_code
    assert_tier1_parts(response)
    assert any("Sarah" in atom.text for atom in response.bundle.atoms)
    assert sorted((e.related_label, e.label) for e in response.bundle.entities) == [
        ("Sarah", "Dana"),
        ("Sarah", "Portland"),
    ]


async def test_killed_ranker_mid_conversation_keeps_tier1_and_names_the_ranker(
    mesh: Mesh, client: GatewayClient
) -> None:
    user_id = await conversation(client)
    assert not (await brief(client, user_id)).degraded
    mesh.kill("retrieval_ranker")
    try:
        response = await brief(client, user_id)
    finally:
        await asyncio.to_thread(mesh.start, ["retrieval_ranker"])
        await recovered(client)
    assert response.degraded and response.reason_code == "TIER2_DEGRADED"
    assert list(response.degraded_parts) == ["retrieval_ranker"]
    assert_tier1_parts(response)
    assert (
        not response.bundle.atoms and not response.bundle.excerpts and not response.bundle.digests
    )
    # The graph is the ThreadStore's: its entities do not depend on the ranker.
    assert sorted(e.label for e in response.bundle.entities) == ["Dana", "Portland"]


async def test_hung_ranker_keeps_tier1_within_the_budget(mesh: Mesh, client: GatewayClient) -> None:
    user_id = await conversation(client)
    mesh.pause("retrieval_ranker")
    try:
        started = asyncio.get_running_loop().time()
        response = await brief(client, user_id)
        elapsed_ms = (asyncio.get_running_loop().time() - started) * 1000
    finally:
        mesh.resume("retrieval_ranker")
        await recovered(client)
    assert list(response.degraded_parts) == ["retrieval_ranker"]
    assert_tier1_parts(response)
    assert elapsed_ms < BUDGET_MS + 400


async def test_do_not_mention_holds_back_an_entity_and_those_reached_from_it(
    client: GatewayClient,
) -> None:
    user_id = await conversation(client)
    await client.command(user_id, "s1", "DO_NOT_MENTION", NOW_US + 30_000_000, target="Portland")
    response = await brief(client, user_id)
    assert [e.label for e in response.bundle.entities] == ["Dana"]
    await client.command(user_id, "s1", "DO_NOT_MENTION", NOW_US + 40_000_000, target="Sarah")
    response = await brief(client, user_id)
    assert list(response.bundle.entities) == []
    assert all("Sarah" not in a.text and "Portland" not in a.text for a in response.bundle.atoms)
