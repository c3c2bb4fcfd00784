"""Find what was meant, not only what was said (seed 001 §2.11.2): a request that shares no
word with a memory still brings it into the bundle when it means the same thing (relation
words, vehicle and pet words, dish -> ingredient, job/work, where one lives), and a memory
unrelated to the request stays out, through the gateway of a real mesh.

The user states each fact in a session of its own, days apart; the next day, every request
is a Brief in a new session, so only retrieval (atoms, excerpts, digests) can bring a fact.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from acceptance_mesh import DAY_US, MINUTE_US, NOW_US, TENANT_KEY, User, check_caps, running_mesh

from memmesh.bench.eval_paraphrase import bundle_text
from memmesh.client.gateway import GatewayClient
from memmesh.runtime.supervisor import Mesh

TENANT = "acc"
# What the user said, by the word that marks it in any bundle item.
FACTS = {
    "Rosa": "My fiancée Rosa teaches chemistry at the high school.",
    "Volvo": "I still drive my dad's old Volvo.",
    "spicy": "Spicy food wrecks my stomach.",
    "Biscuit": "We adopted a golden retriever called Biscuit last spring.",
    "Lisbon": "I moved to Lisbon two years ago.",
    "nurse": "I work as a nurse at the children's hospital.",
    "passport": "I renewed my passport in March.",
    "chess": "I'm learning to play chess.",
    "cello": "My brother Tom plays the cello.",
}
# (request, the fact it must reach, a fact it must not pull in); no request shares a content
# word with the fact it must reach (checked below).
PARAPHRASES = [
    ("what does my future wife do for work", "Rosa", "passport"),
    ("does my fiance have a job", "Rosa", "chess"),
    ("get the car ready for winter", "Volvo", "chess"),
    ("what vehicle do I have", "Volvo", "cello"),
    ("give me a curry recipe", "spicy", "passport"),
    ("which city do I live in", "Lisbon", "chess"),
    ("what's my job", "nurse", "passport"),
    ("tell me about my sibling", "cello", "passport"),
    ("what board game am I into", "chess", "passport"),
    ("my pet dog", "Biscuit", "passport"),
]


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "paraphrase")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        speaker = User(mesh, gateway)
        for day, text in enumerate(FACTS.values()):
            await speaker.say(text, NOW_US - (len(FACTS) - day) * DAY_US, f"day-{day}")
        yield speaker


# Words that say nothing of a fact's content.
FUNCTION_WORDS = {"my", "i", "a", "the", "do", "does", "what", "to", "in", "at"}


def _content_words(text: str) -> set[str]:
    return {word.strip("?',.").lower() for word in text.split()} - FUNCTION_WORDS


@pytest.mark.parametrize(("request_text", "meant", "unrelated"), PARAPHRASES)
async def test_a_paraphrase_reaches_the_fact_it_means_and_not_an_unrelated_one(
    user: User, request_text: str, meant: str, unrelated: str
) -> None:
    assert not _content_words(request_text) & _content_words(FACTS[meant])
    response = await user.brief(request_text, NOW_US + MINUTE_US, f"ask-{request_text}")
    check_caps(response)
    assert not response.degraded
    found = bundle_text(response)
    assert meant.lower() in found, found
    assert unrelated.lower() not in found, found
