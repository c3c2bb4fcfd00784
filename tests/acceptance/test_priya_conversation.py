"""A first conversation as a new user speaks it on the voice channel leaves a durable atom for
each of its seven facts and none for the trip it mentions (seed 000, seed 002), and the next
day's voice Briefs for dinner and for movie-night snacks carry the allergy and the diet as memory items the assistant
uses but does not say (seed 001 §2.11.11), through the gateway of a real mesh.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from acceptance_mesh import DAY_US, MINUTE_US, NOW_US, TENANT_KEY, User, check_caps, running_mesh

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import memory_pb2
from memmesh.runtime.supervisor import Mesh

TENANT = "acc"
YESTERDAY = NOW_US - DAY_US
CONVERSATION = (
    "hey, it's Priya here",
    "quick thing, peanuts put me in the hospital once, so none of that ever please",
    "I went vegetarian about a year ago",
    "honestly cilantro tastes like soap to me",
    "my partner Joaquin works night shifts as an ER nurse",
    "we adopted a greyhound called Biscuit last month",
    "I'm learning Japanese for a trip to Osaka in October",
)
# Each fact by its category and the words its atom must hold.
FACTS = {
    "name": (memory_pb2.ATOM_CATEGORY_IDENTITY, ("priya",)),
    "peanut allergy": (memory_pb2.ATOM_CATEGORY_CONSTRAINT, ("peanut",)),
    "vegetarian": (memory_pb2.ATOM_CATEGORY_CONSTRAINT, ("vegetarian",)),
    "cilantro": (memory_pb2.ATOM_CATEGORY_PREFERENCE, ("cilantro",)),
    "partner and job": (memory_pb2.ATOM_CATEGORY_RELATIONSHIP, ("joaquin", "nurse")),
    "greyhound": (memory_pb2.ATOM_CATEGORY_RELATIONSHIP, ("greyhound", "biscuit")),
    "japanese": (memory_pb2.ATOM_CATEGORY_IDENTITY, ("japanese",)),
}
DINNER = "what should I cook tonight?"
SNACKS = "any ideas for movie-night snacks?"


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "priya")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def _first_conversation(user: User) -> list[memory_pb2.Atom]:
    for n, text in enumerate(CONVERSATION):
        await user.say(text, YESTERDAY + n * MINUTE_US, "day-1")
    await user.gateway.close_session(user.user_id, "day-1", YESTERDAY + 30 * MINUTE_US)
    atoms: list[memory_pb2.Atom] = await user.atoms()
    return atoms


def _atom_for(atoms: list[memory_pb2.Atom], fact: str) -> memory_pb2.Atom:
    category, words = FACTS[fact]
    found = [a for a in atoms if a.category == category and all(w in a.text.lower() for w in words)]
    assert found, (fact, [(a.category, a.text) for a in atoms])
    return found[0]


async def test_every_fact_of_the_conversation_becomes_an_atom_and_the_trip_does_not(
    user: User,
) -> None:
    atoms = await _first_conversation(user)
    for fact in FACTS:
        _atom_for(atoms, fact)
    # The trip is episodic: neither its place nor its month is stored (labelling rule 3).
    for atom in atoms:
        assert "osaka" not in atom.text.lower() and "october" not in atom.text.lower(), atom.text


async def test_next_day_voice_briefs_for_food_use_the_allergy_and_diet_without_saying_them(
    user: User,
) -> None:
    atoms = await _first_conversation(user)
    allergy, diet = _atom_for(atoms, "peanut allergy"), _atom_for(atoms, "vegetarian")
    for n, query in enumerate((DINNER, SNACKS)):
        response = await user.brief(query, NOW_US + n * MINUTE_US, f"day-2-{n}", channel="voice")
        check_caps(response)
        carried = {a.atom_id: a for a in response.bundle.atoms}
        for atom in (allergy, diet):
            assert atom.atom_id in carried, (query, atom.text, [a.text for a in carried.values()])
            assert carried[atom.atom_id].do_not_say, (query, carried[atom.atom_id])
