"""Seed 001 §2.17 Q14 (redundancy prevention + do-not-repeat) through the gateway over
real engine processes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from acceptance_mesh import (
    DAY_US,
    MINUTE_US,
    NOW_US,
    REASK_REASONS,
    TENANT,
    TENANT_KEY,
    User,
    atom_id_of,
    running_mesh,
    seeded_atom,
)

from memmesh.client.gateway import GatewayClient
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.runtime.supervisor import Mesh

STABLE_STATE_KEYS = {"identity.name", "identity.language", "preference.contact"}


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "q14")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def known_user(user: User) -> None:
    """Name, language and contact preference known in Current State and said in conversation."""
    await user.set_profile(
        NOW_US - 2 * DAY_US,
        set_display_name="Alex",
        set_primary_language="es",
        set_contact_preference=state_pb.CONTACT_PREFERENCE_TEXT,
    )
    await user.say("My name is Alex.", NOW_US - DAY_US)
    await user.say("My native language is Spanish.", NOW_US - DAY_US + MINUTE_US)


async def test_at_q14_mem_do_not_repeat(user: User) -> None:
    await known_user(user)
    # Weaker duplicates of the known facts (an old one, an uncertain one) are no reason to ask.
    await user.seed_atoms(
        [
            seeded_atom(
                atom_id_of(user.user_id, "old-name"),
                "identity.name.spoken",
                "User's name is Alex.",
                critical_tokens=("Alex",),
                created_us=NOW_US - 90 * DAY_US,
            ),
            seeded_atom(
                atom_id_of(user.user_id, "weak-language"),
                "identity.language.spoken",
                "User speaks Spanish.",
                confidence_bp=6000,
            ),
        ]
    )
    for n, query in enumerate(
        ("what is my name?", "which language do I speak?", "how should you contact me?")
    ):
        response = await user.brief(query, NOW_US, f"dnr-{n}")
        keys = list(response.bundle.push.do_not_repeat_keys)
        assert STABLE_STATE_KEYS <= set(keys) and keys == sorted(keys)
        assert response.bundle.push.display_name == "Alex"
        assert response.bundle.push.contact_preference == "text"
        assert not response.bundle.HasField("clarification"), response.bundle.clarification
    # Facts known only from conversation are flagged too once confirmed.
    other = User(user.mesh, user.gateway)
    await other.say("My name is Alex.", NOW_US - DAY_US)
    flagged = await other.brief("what is my name?", NOW_US, "dnr-conversation")
    assert "identity.name" in flagged.bundle.push.do_not_repeat_keys
    assert not flagged.bundle.HasField("clarification")


async def test_at_q14_mem_do_not_repeat_flags_are_pushed_every_turn(user: User) -> None:
    await user.say("My name is Alex.", NOW_US - DAY_US)
    await user.say("My native language is Spanish.", NOW_US - DAY_US + MINUTE_US)
    response = await user.brief("can you help me plan my week?", NOW_US)
    keys = set(response.bundle.push.do_not_repeat_keys)

    def flagged(key: str) -> bool:
        # A flag covers its key and the keys below it (identity.language covers identity.language.native).
        return any(key == k or key.startswith(k + ".") for k in keys)

    assert flagged("identity.name") and flagged("identity.language.native")
    assert (
        response.bundle.push.display_name == "Alex"
        and response.bundle.push.primary_language == "es"
    )


async def test_at_q14_mem_reask_guards(user: User) -> None:
    await known_user(user)
    await user.say("My wife is named Anna.", NOW_US - 3 * DAY_US)
    await user.say("My wife is named Hannah.", NOW_US - 2 * DAY_US)
    await user.say("I play the violin.", NOW_US - 40 * DAY_US, "s-old")
    await user.seed_atoms(
        [
            seeded_atom(
                atom_id_of(user.user_id, "low"),
                "preference.sushi",
                "User likes sushi.",
                confidence_bp=6000,
            )
        ]
    )
    sessions = iter(f"reask-{n}" for n in range(100))

    async def question(query: str, **flags: bool):  # type: ignore[no-untyped-def]
        response = await user.brief(query, NOW_US, next(sessions), **flags)
        assert response.counters.clarification_due_to_memory_count == int(
            response.bundle.HasField("clarification")
        )
        return response.bundle.clarification if response.bundle.HasField("clarification") else None

    # Known, confirmed stable facts: never asked without a reason.
    for query in ("what is my name?", "which language do I speak?", "hello Selene"):
        assert await question(query) is None, query
    # Each allowed reason asks, naming its reason code.
    conflict = await question("what is my wife called?")
    assert (conflict.reason_code, conflict.key) == ("CONFLICT", "relationship.spouse")
    stale = await question("should I play the violin?")
    assert stale.reason_code == "STALE" and "violin" in stale.text
    low = await question("do I like sushi?")
    assert low.reason_code == "LOW_CONFIDENCE" and "sushi" in low.text
    review = await question("what is my name?", user_review_requested=True)
    assert (review.reason_code, review.key) == ("USER_REQUEST", "identity.name")
    restored = await question("what is my name?", device_restored=True)
    assert (restored.reason_code, restored.key) == ("DEVICE_RESTORE", "identity.name")
    # A statement contradicting the known name is a conflict and may be asked about (which
    # of the two conflicting atoms ranks first depends on their ids).
    await user.say("My name is Sam.", NOW_US - MINUTE_US)
    contradicted = await question("what is my name?")
    assert (contradicted.reason_code, contradicted.key) == ("CONFLICT", "identity.name")
    assert "Sam" in contradicted.text or "Alex" in contradicted.text
    for asked in (conflict, stale, low, review, restored, contradicted):
        assert asked.reason_code in REASK_REASONS and asked.question_id and asked.atom_id


async def test_at_q14_mem_unresolved_suppress_same_question(user: User) -> None:
    await user.seed_atoms(
        [
            seeded_atom(
                atom_id_of(user.user_id, "low"),
                "preference.sushi",
                "User likes sushi.",
                confidence_bp=6000,
            ),
            seeded_atom(
                atom_id_of(user.user_id, "sure"),
                "preference.sushi.place",
                "User's sushi place is Kaito.",
                confidence_bp=9500,
            ),
        ]
    )
    asked = await user.brief("shall we get sushi tonight?", NOW_US, "s1")
    question = asked.bundle.clarification
    assert question.reason_code == "LOW_CONFIDENCE"
    # The user's next turn does not answer it.
    await user.say("Actually, what time is it in Tokyo?", NOW_US + MINUTE_US, "s1")
    later = await user.brief("shall we get sushi tonight?", NOW_US + 2 * MINUTE_US, "s1")
    assert not later.bundle.HasField("clarification")
    # Proceed without the uncertain memory; the confirmed one stays.
    assert [a.text for a in later.bundle.atoms] == ["User's sushi place is Kaito."]
    # A caller may report unanswered ids itself (e.g. asked by another gateway instance).
    reported = await user.brief(
        "shall we get sushi tonight?",
        NOW_US,
        "s-reported",
        unanswered_question_ids=(question.question_id,),
    )
    assert not reported.bundle.HasField("clarification")
    # A new session may ask again.
    fresh = await user.brief("shall we get sushi tonight?", NOW_US + DAY_US, "s2")
    assert fresh.bundle.clarification.question_id == question.question_id


async def test_at_q14_mem_unresolved_suppress(user: User) -> None:
    await user.say("My wife is named Anna.", NOW_US - 2 * DAY_US)
    await user.say("My wife is named Hannah.", NOW_US - DAY_US)
    first = await user.brief("should I buy flowers for my wife?", NOW_US, "s1")
    assert first.bundle.clarification.key == "relationship.spouse"
    await user.say("Let's talk about dinner plans.", NOW_US + MINUTE_US, "s1")
    for n in range(2):
        later = await user.brief(
            "what should my wife and I cook?", NOW_US + (2 + n) * MINUTE_US, "s1"
        )
        assert later.bundle.clarification.key != "relationship.spouse", later.bundle.clarification
    fresh = await user.brief("what should my wife and I cook?", NOW_US + DAY_US, "s2")
    assert fresh.bundle.clarification.key == "relationship.spouse"
