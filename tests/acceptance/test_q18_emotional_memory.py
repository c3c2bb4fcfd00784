"""Q18 — Emotional continuity boundaries (seed 001 §2.3, §2.17): emotional memory shapes
tone only, never facts or decisions; its signals are bounded and tagged; it can be forgotten
on its own, leaving the ledger's truth as it is. Real engine processes behind the gateway."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from acceptance_mesh import (
    DAY_US,
    INTERNAL_TOKEN,
    MINUTE_US,
    NOW_US,
    TENANT,
    TENANT_KEY,
    User,
    response_text,
    running_mesh,
)

from memmesh.client.gateway import GatewayClient
from memmesh.engines.thread_store.domain.tone import TONE_LABELS
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh

# Seed 001 Q18: "emotional signal payload <= 512 bytes".
TONE_BYTES_CAP = 512
QUERY = "what should I cook for my sister this weekend?"
FACTS = ("My sister Ana lives in Porto.", "Ana is vegetarian.")
TONE_TURNS = (
    "Please keep your answers short, I'm usually in a hurry.",
    "You can be more casual with me, no need to be so formal.",
)


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "q18-emotional")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def _tell(user: User, turns: tuple[str, ...], start_us: int, session_id: str) -> None:
    for n, text in enumerate(turns):
        await user.say(text, start_us + n * MINUTE_US, session_id=session_id)


def _without_tone(response: gateway_pb.BriefResponse) -> bytes:
    """Everything a Brief decides except its tone, byte for byte."""
    copy = gateway_pb.BriefResponse()
    copy.CopyFrom(response)
    copy.ClearField("tone")
    return copy.SerializeToString(deterministic=True)


async def _ledger_events(user: User) -> list[ledger_pb.LedgerEvent]:
    async with engine_channel(user.mesh.addrs["ledger"], INTERNAL_TOKEN, 5.0) as channel:
        stub = ledger_grpc.LedgerServiceStub(channel)
        return [r.event async for r in stub.Read(ledger_pb.ReadRequest(scope=user.scope))]


async def _verified(user: User) -> bool:
    async with engine_channel(user.mesh.addrs["ledger"], INTERNAL_TOKEN, 5.0) as channel:
        reply = await ledger_grpc.LedgerServiceStub(channel).Verify(
            ledger_pb.VerifyRequest(scope=user.scope)
        )
    return bool(reply.intact)


async def test_at_q18_mem_emo_tone_only(user: User) -> None:
    await _tell(user, (*FACTS, *TONE_TURNS), NOW_US, "s1")
    next_day = NOW_US + DAY_US
    first = await user.brief(QUERY, next_day, session_id="s2")
    again = await user.brief(QUERY, next_day, session_id="s2")
    # Learned over the last session, not from this query (which says nothing of tone).
    assert {"brief", "casual"} <= set(first.tone.learned), first.tone
    # A Brief is repeatable, so any difference below is the tone memory's doing.
    assert _without_tone(first) == _without_tone(again)

    await user.gateway.command(user.user_id, "s2", "FORGET_TONE", next_day)
    forgotten = await user.brief(QUERY, next_day, session_id="s2")
    assert list(forgotten.tone.learned) == []
    # Tone changed; facts, decisions, hints and counters are byte-identical.
    assert _without_tone(forgotten) == _without_tone(first)
    assert list(forgotten.tone.labels) == list(first.tone.labels)


async def test_at_q18_mem_emo_no_facts(mesh: Mesh, user: User) -> None:
    turns = (
        "I just got promoted to head nurse at Saint Mary's hospital!",
        "It's been a rough week though, so be gentle with me.",
        "haha that's hilarious",
        "lol ok",
    )
    await _tell(user, turns, NOW_US, "s1")
    brief = await user.brief(QUERY, NOW_US + DAY_US, session_id="s2")
    learned = list(brief.tone.learned)
    assert {"celebratory", "supportive", "gentle", "playful"} <= set(learned), learned
    # Tagged and bounded: labels of the fixed vocabulary only, within the payload cap.
    assert set(learned) <= set(TONE_LABELS)
    assert brief.tone.ByteSize() <= TONE_BYTES_CAP
    tone_text = response_text(brief.tone).lower()
    for word in ("nurse", "promoted", "mary", "hospital", "week", "hilarious"):
        assert word not in tone_text
    # No emotional signal becomes a fact: no atom, in the capsule or the bundle, states one
    # (the transcript keeps the user's own words, as it keeps every turn).
    atom_texts = [a.text.lower() for a in await user.atoms()]
    atom_texts += [a.text.lower() for a in brief.bundle.atoms]
    assert any("nurse" in text for text in atom_texts)
    for label in learned:
        assert not any(label in text for text in atom_texts), label
    # Voice-locked: another user hears none of it, and an unverified speaker gets nothing.
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        stranger = User(mesh, gateway)
        await stranger.say("My brother lives in Lyon.", NOW_US, session_id="s1")
        other = await stranger.brief(QUERY, NOW_US + DAY_US, session_id="s2")
    assert list(other.tone.learned) == []
    unverified = await user.gateway.brief(
        user.user_id, "s2", NOW_US + DAY_US, QUERY, identity_verified=False
    )
    assert unverified.reason_code == "IDENTITY_UNVERIFIED"
    assert list(unverified.tone.learned) == []


async def test_at_q18_mem_emo_forget(user: User) -> None:
    await _tell(user, (*FACTS, *TONE_TURNS), NOW_US, "s1")
    next_day = NOW_US + DAY_US
    before = await user.brief(QUERY, next_day, session_id="s2")
    assert {"brief", "casual"} <= set(before.tone.learned)
    atoms_before = {a.atom_id for a in await user.atoms()}
    events_before = await _ledger_events(user)

    said = await user.say("Forget how I like to be spoken to.", next_day, session_id="s2")
    assert said.command == "FORGET_TONE"
    after = await user.brief(QUERY, next_day + MINUTE_US, session_id="s2")
    assert list(after.tone.learned) == []
    # Only the tone went: every fact and every ledger event is still there, Verify green.
    assert {a.atom_id for a in await user.atoms()} == atoms_before
    assert "Porto" in response_text(after.bundle)
    events_after = await _ledger_events(user)
    assert events_after[: len(events_before)] == events_before
    assert await _verified(user)
    # Later turns teach it again: forgetting is not a switch that stops learning.
    await user.say("Please keep it short.", next_day + 2 * MINUTE_US, session_id="s2")
    relearned = await user.brief(QUERY, next_day + 3 * MINUTE_US, session_id="s2")
    assert list(relearned.tone.learned) == ["brief"]


async def test_a_mood_said_off_the_record_is_not_learned(user: User) -> None:
    said = await user.say(
        "Off the record, I'm feeling really overwhelmed lately.", NOW_US, session_id="s1"
    )
    assert said.command == "DO_NOT_STORE"
    brief = await user.brief(QUERY, NOW_US + MINUTE_US, session_id="s1")
    assert "supportive" not in brief.tone.learned


async def test_tone_decays_by_policy(user: User) -> None:
    await _tell(user, ("It's been a really rough week.",), NOW_US, "s1")
    soon = await user.brief(QUERY, NOW_US + DAY_US, session_id="s2")
    assert "supportive" in soon.tone.learned
    # A mood softens within days; nothing else of the memory changes with it.
    later = await user.brief(QUERY, NOW_US + 14 * DAY_US, session_id="s3")
    assert "supportive" not in later.tone.learned
