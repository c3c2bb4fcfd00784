"""Seed 003 (brief/ingest orchestration): session rules, Tier-1 fields, Tier-2 failure,
coherent and idempotent Ingest, tenant keys and unverified speakers, through the gateway
over real engine processes. Per-engine Tier-1 fault tests live in tests/integration/gateway."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from acceptance_mesh import (
    DAY_US,
    MINUTE_US,
    NOW_US,
    OTHER_TENANT_KEY,
    TENANT,
    TENANT_KEY,
    User,
    running_mesh,
)

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import micros_of

START, IN_SESSION = bundle_pb2.SESSION_MODE_SESSION_START, bundle_pb2.SESSION_MODE_IN_SESSION
GAP_US = 30 * MINUTE_US


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "seed003")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def test_session_start_on_new_session_or_gap_above_30_minutes(user: User) -> None:
    assert (await user.brief("hi", NOW_US, "s1")).bundle.mode == START
    assert (await user.say("Let's plan tomorrow.", NOW_US, "s1")).mode == START
    assert (await user.brief("and then?", NOW_US + GAP_US, "s1")).bundle.mode == IN_SESSION
    assert (await user.gateway.open_session(user.user_id, "s1", NOW_US + GAP_US)).mode == IN_SESSION
    assert (await user.brief("and then?", NOW_US + GAP_US + 1, "s1")).bundle.mode == START
    assert (await user.gateway.open_session(user.user_id, "s1", NOW_US + GAP_US + 1)).mode == START
    assert (await user.brief("new topic", NOW_US + MINUTE_US, "s2")).bundle.mode == START
    # Exactly 30 minutes after the last turn is still in session; a minute more is not.
    assert (await user.say("Still here.", NOW_US + GAP_US, "s1")).mode == IN_SESSION
    assert (await user.say("Back again.", NOW_US + 2 * GAP_US + MINUTE_US, "s1")).mode == START


async def test_episode_bridge_only_on_session_start(user: User) -> None:
    await user.say("I need to book the dentist for my daughter Mia.", NOW_US, "s1")
    await user.say("Got it. What time works best?", NOW_US + 5 * 1_000_000, "s1", role="assistant")
    inside = await user.brief("what time is good?", NOW_US + MINUTE_US, "s1")
    assert inside.bundle.mode == IN_SESSION and not inside.bundle.episode_bridge
    started = await user.brief("where were we?", NOW_US + DAY_US, "s2")
    assert started.bundle.mode == START
    assert "dentist" in started.bundle.episode_bridge
    await user.say("Where were we?", NOW_US + DAY_US + 1, "s2")
    continued = await user.brief("ok, the dentist then", NOW_US + DAY_US + MINUTE_US, "s2")
    assert continued.bundle.mode == IN_SESSION and not continued.bundle.episode_bridge


async def test_tier1_fields_are_always_present(user: User) -> None:
    await user.set_profile(
        NOW_US - DAY_US, set_display_name="Kaiser", set_timezone="America/Los_Angeles"
    )
    await user.say("Let's plan tomorrow. I need to book the dentist.", NOW_US, "s1")
    await user.say(
        "Sure, what should we prioritize?", NOW_US + 6 * 1_000_000, "s1", role="assistant"
    )
    now = NOW_US + 2 * MINUTE_US
    response = await user.brief("what's the plan for tomorrow?", now, "s1")
    bundle = response.bundle
    assert not response.degraded
    assert (bundle.push.display_name, bundle.push.timezone) == ("Kaiser", "America/Los_Angeles")
    assert micros_of(bundle.temporal.now) == now
    assert micros_of(bundle.temporal.last_interaction_time) == NOW_US + 6 * 1_000_000
    assert bundle.temporal.time_since_last_interaction.seconds == (now - NOW_US) // 1_000_000 - 6
    assert [(t.role, t.text) for t in bundle.working_memory] == [
        (memory_pb2.ROLE_USER, "Let's plan tomorrow. I need to book the dentist."),
        (memory_pb2.ROLE_ASSISTANT, "Sure, what should we prioritize?"),
    ]
    assert "dentist" in bundle.rolling_summary
    assert ["dentist" in loop.text.lower() for loop in bundle.active_loops] == [True]


async def test_user_and_assistant_turns_keep_working_memory_coherent(user: User) -> None:
    script = [
        ("user", "Can you help me with dinner?"),
        ("assistant", "Of course. I need to know what you have."),
        ("user", "I have rice and beans."),
        ("assistant", "Then let's make a rice bowl."),
    ]
    for n, (role, text) in enumerate(script):
        await user.say(text, NOW_US + n * 1_000_000, "s1", role=role)
    response = await user.brief("and for dessert?", NOW_US + MINUTE_US, "s1")
    roles = {memory_pb2.ROLE_USER: "user", memory_pb2.ROLE_ASSISTANT: "assistant"}
    assert [(roles[t.role], t.text) for t in response.bundle.working_memory] == script
    assert [t.turn_id for t in response.bundle.working_memory] == ["t1", "t2", "t3", "t4"]
    # Only user turns open loops: the assistant's "I need to know" is not a commitment of the user.
    assert not response.bundle.active_loops
    # The rolling summary is told from the user's turns.
    assert (
        "rice" in response.bundle.rolling_summary and "bowl" not in response.bundle.rolling_summary
    )


async def test_retried_ingest_with_the_same_turn_id_changes_nothing(user: User) -> None:
    first = await user.gateway.ingest(
        user.user_id, "s1", "turn-1", "user", "I have a sister named Sarah.", NOW_US
    )
    assert first.ok and not first.duplicate
    before = await user.brief("what is my sister called?", NOW_US + MINUTE_US, "s1")
    atoms = await user.atoms()
    for text in ("I have a sister named Sarah.", "I have a sister named Sandra."):
        retried = await user.gateway.ingest(user.user_id, "s1", "turn-1", "user", text, NOW_US)
        assert retried.ok and retried.duplicate
    after = await user.brief("what is my sister called?", NOW_US + MINUTE_US, "s1")
    assert after.SerializeToString(deterministic=True) == before.SerializeToString(
        deterministic=True
    )
    assert await user.atoms() == atoms


async def test_a_key_of_another_tenant_is_refused(mesh: Mesh, user: User) -> None:
    await user.say("I have a sister named Sarah.", NOW_US, "s1")
    async with GatewayClient(mesh.addrs["gateway"], OTHER_TENANT_KEY, tenant_id=TENANT) as intruder:
        calls = (
            intruder.brief(user.user_id, "s1", NOW_US + 1, "what is my sister called?"),
            intruder.ingest(user.user_id, "s1", "t-x", "user", "hello", NOW_US + 1),
            intruder.remember(user.user_id),
        )
        for call in calls:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call
            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # Nothing the intruder tried was recorded.
    response = await user.brief("what is my sister called?", NOW_US + 2, "s1")
    assert [t.turn_id for t in response.bundle.working_memory] == ["t1"]


async def test_unverified_speaker_gets_no_personal_memory(user: User) -> None:
    await user.set_profile(
        NOW_US - DAY_US,
        set_display_name="Kaiser",
        set_contact_preference=state_pb.CONTACT_PREFERENCE_SPEAK,
    )
    await user.say("I have a sister named Sarah. I need to book the dentist.", NOW_US, "s1")
    for channel in ("voice", "text"):
        response = await user.gateway.brief(
            user.user_id,
            "s1",
            NOW_US + MINUTE_US,
            "what is my sister called?",
            channel=channel,
            identity_verified=False,
        )
        assert response.reason_code == "IDENTITY_UNVERIFIED" and response.degraded
        personal = bundle_pb2.ContextBundle(
            mode=response.bundle.mode, temporal=response.bundle.temporal
        )
        assert response.bundle == personal
        assert micros_of(response.bundle.temporal.now) == NOW_US + MINUTE_US
        assert not response.hints.vocabulary and not response.hints.corrections
        assert (
            await user.gateway.remember(user.user_id, channel=channel, identity_verified=False)
            == []
        )


async def test_atom_extractor_down_brief_stays_full_and_ingest_is_queued(
    mesh: Mesh, user: User
) -> None:
    await user.say("I have a sister named Sarah.", NOW_US, "s1")
    mesh.kill("atom_extractor")
    try:
        response = await user.brief("what is my sister called?", NOW_US + MINUTE_US, "s1")
        # Only the Tier-2 part behind the extractor (correction pairs) is left out and flagged.
        assert (response.degraded, response.reason_code, list(response.degraded_parts)) == (
            True,
            "TIER2_DEGRADED",
            ["corrections"],
        )
        assert [a.text for a in response.bundle.atoms] == ["User has a sister named Sarah."]
        assert [t.turn_id for t in response.bundle.working_memory] == ["t1"]
        queued = await user.say("I have a dog named Rex.", NOW_US + 2 * MINUTE_US, "s1")
        assert queued.extraction_queued
        waiting = await user.brief("what is my dog called?", NOW_US + 3 * MINUTE_US, "s1")
        assert [t.turn_id for t in waiting.bundle.working_memory] == ["t1", "t2"]
        assert not any("Rex" in a.text for a in waiting.bundle.atoms)
    finally:
        await asyncio.to_thread(mesh.start, ["atom_extractor"])
    for _ in range(100):
        back = await user.brief("what is my dog called?", NOW_US + 4 * MINUTE_US, "s1")
        if (
            any(a.text == "User has a dog named Rex." for a in back.bundle.atoms)
            and not back.degraded
        ):
            break
        await asyncio.sleep(0.1)
    assert [a.text for a in back.bundle.atoms] == ["User has a dog named Rex."]
    assert not back.degraded
    assert [a.text for a in await user.atoms()].count("User has a dog named Rex.") == 1
