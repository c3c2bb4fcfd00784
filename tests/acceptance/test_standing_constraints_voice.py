"""Standing constraints reach every turn they matter to, and SAFE_TO_TEXT on a voice channel
is used, not said (seed 001 §2.11.2, §2.11.11), through the gateway of a real mesh.

A user states a peanut allergy and a vegetarian diet; the next day, in a new session, voice
Briefs for requests that name neither carry both as bundle atoms marked do-not-say, the
INTERNAL_ONLY items of the same user stay out, and a text Brief carries them unmarked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from acceptance_mesh import (
    DAY_US,
    MINUTE_US,
    NOW_US,
    TENANT_KEY,
    User,
    check_caps,
    response_text,
    running_mesh,
)

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import memory_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.runtime.supervisor import Mesh

TENANT = "acc"
DINNER = "what should I cook tonight?"
SNACKS = "any ideas for movie-night snacks?"
TRAVEL = "plan a weekend in Lisbon"
HEADACHE = "should I take something for this headache"
YESTERDAY = NOW_US - DAY_US


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "standing")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def _yesterday(user: User) -> tuple[memory_pb2.Atom, memory_pb2.Atom, memory_pb2.Atom]:
    """Yesterday's session: the allergy, the diet, and a residence made INTERNAL_ONLY."""
    for n, text in enumerate(
        ("I'm allergic to peanuts.", "I'm a vegetarian.", "I live in Boston.", "I love jazz.")
    ):
        await user.say(text, YESTERDAY + n * MINUTE_US, "day-1")
    marked = await user.mark(
        "identity.residence",
        YESTERDAY + 10 * MINUTE_US,
        set_exposure=memory_pb2.EXPOSURE_INTERNAL_ONLY,
    )
    assert len(marked.changes) == 1
    await user.gateway.close_session(user.user_id, "day-1", YESTERDAY + 11 * MINUTE_US)
    atoms = await user.atoms()
    allergy = next(a for a in atoms if "peanut" in a.text.lower())
    diet = next(a for a in atoms if "vegetarian" in a.text.lower())
    hidden = next(a for a in atoms if "Boston" in a.text)
    assert hidden.exposure == memory_pb2.EXPOSURE_INTERNAL_ONLY
    # Health and diet facts are written, not spoken, by default.
    assert allergy.exposure == diet.exposure == memory_pb2.EXPOSURE_SAFE_TO_TEXT
    return allergy, diet, hidden


def _carried(response: gateway_pb.BriefResponse, atom_id: str) -> object:
    return next((a for a in response.bundle.atoms if a.atom_id == atom_id), None)


def _no_internal_leak(response: gateway_pb.BriefResponse, hidden: memory_pb2.Atom) -> None:
    text = response_text(response)
    assert hidden.atom_id not in text and "Boston" not in text, text


async def test_next_day_voice_briefs_carry_the_allergy_and_diet_marked_do_not_say(
    user: User,
) -> None:
    allergy, diet, hidden = await _yesterday(user)
    # The last two share no word with either fact: only the ranker's push brings them.
    for n, query in enumerate((DINNER, SNACKS, TRAVEL, HEADACHE)):
        response = await user.brief(query, NOW_US + n * MINUTE_US, f"day-2-{n}", channel="voice")
        check_caps(response)
        for atom in (allergy, diet):
            carried = _carried(response, atom.atom_id)
            assert carried is not None, (query, response_text(response.bundle))
            assert carried.do_not_say and carried.standing_constraint, (query, carried)
        # No question reads a fact not to be said aloud.
        assert response.bundle.clarification.atom_id not in (allergy.atom_id, diet.atom_id)
        _no_internal_leak(response, hidden)

    text = await user.brief(DINNER, NOW_US + 5 * MINUTE_US, "day-2-text", channel="text")
    for atom in (allergy, diet):
        carried = _carried(text, atom.atom_id)
        assert carried is not None and not carried.do_not_say and carried.standing_constraint
    _no_internal_leak(text, hidden)

    # A request no standing constraint matters to does not get them pushed (asked of the
    # ranker itself, whose generous deadline leaves the encoder all the time it needs).
    unrelated = await user.retrieve("what's 12 times 7?", NOW_US + 6 * MINUTE_US)
    assert list(unrelated.standing_constraints) == []
    dinner = await user.retrieve(DINNER, NOW_US + 6 * MINUTE_US)
    assert {c.doc_id for c in dinner.standing_constraints} == {allergy.atom_id, diet.atom_id}


async def test_do_not_mention_still_holds_a_standing_constraint_back(user: User) -> None:
    allergy, diet, hidden = await _yesterday(user)
    await user.gateway.command(
        user.user_id, "day-1", "DO_NOT_MENTION", NOW_US - MINUTE_US, target="peanuts"
    )
    for channel in ("voice", "text"):
        response = await user.brief(DINNER, NOW_US, f"day-2-{channel}", channel=channel)
        assert _carried(response, allergy.atom_id) is None
        assert "peanut" not in response_text(response).lower()
        carried = _carried(response, diet.atom_id)
        assert carried is not None and carried.do_not_say == (channel == "voice")
        _no_internal_leak(response, hidden)
