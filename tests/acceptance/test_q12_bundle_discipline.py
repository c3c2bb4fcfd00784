"""Seed 001 §2.17 Q12 (deterministic memory bundle + retrieval discipline) through the
gateway over real engine processes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from acceptance_mesh import (
    BUNDLE_BYTES_CAP,
    DAY_US,
    MAX_ATOMS,
    MAX_RECALL_ITEMS,
    MAX_WORKING_TURNS,
    MINUTE_US,
    NOW_US,
    RECALL_BYTES_CAP,
    TENANT,
    TENANT_KEY,
    User,
    atom_id_of,
    check_caps,
    response_text,
    running_mesh,
    seeded_atom,
)

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import memory_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.runtime.supervisor import Mesh

FACTS = [
    "I love jazz.",
    "I prefer tea over coffee.",
    "I am a vegetarian.",
    "I work as a nurse.",
    "My favorite color is blue.",
    "I play the guitar.",
    "I hate cilantro.",
    "My boss is named Greg.",
    "I have a dog named Rex.",
    "I am left-handed.",
    "I have a friend named Alice.",
    "I have a friend named Carla.",
]
TAG = memory_pb2.MemoryTag.Name


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "q12")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


def garden_atoms(user: User, long_text: bool) -> list[memory_pb2.Atom]:
    """45 atoms all about the garden, with signals varied deterministically."""
    filler = " It needs compost, mulch and water every morning before the heat." * (
        24 if long_text else 0
    )
    return [
        seeded_atom(
            atom_id_of(user.user_id, f"garden-{i}"),
            f"project.garden.bed{i:02d}",
            f"User's garden bed {i} grows vegetables.{filler}",
            pinned=i % 11 == 0,
            provenance=(memory_pb2.PROVENANCE_VERIFIED, memory_pb2.PROVENANCE_USER_STATED)[i % 2],
            confidence_bp=8000 + (i * 37) % 2000,
            last_use_us=NOW_US - (i % 5) * DAY_US,
            use_count=i % 7,
        )
        for i in range(45)
    ]


async def test_at_q12_mem_bundle_budgets(user: User) -> None:
    # Long archive turns in an earlier session: candidates for excerpts.
    for n in range(4):
        await user.say(
            f"Garden diary {n}: " + "the garden vegetables grew tall in the sun. " * 60,
            NOW_US - 3 * DAY_US + n,
            "s0",
        )
    # Real facts for "what do you remember about me?".
    for n, fact in enumerate(FACTS):
        await user.say(fact, NOW_US - 2 * DAY_US + n * MINUTE_US, "s0")
    # More turns in the current session than working memory holds.
    for n in range(9):
        await user.say(
            f"Turn {n} of today about the weather and the garden.", NOW_US + n * MINUTE_US, "s1"
        )
    # Far more relevant atoms than fit (seeded: the extractor has no sentence for 45 look-alikes).
    await user.seed_atoms(garden_atoms(user, long_text=False))
    now = NOW_US + 10 * MINUTE_US

    response = await user.brief("how is my garden doing?", now)
    check_caps(response)
    bundle = response.bundle
    ranked = await user.retrieve("how is my garden doing?", now)
    assert len(ranked.atoms) == MAX_ATOMS
    # Only the top-ranked go in, in the ranker's §2.11.9 order, after the standing
    # constraints the request could touch (the vegetarian diet, if the ranker pushed it).
    pushed = [c.doc_id for c in ranked.standing_constraints]
    expected = pushed + [c.doc_id for c in ranked.atoms if c.doc_id not in pushed]
    assert [a.atom_id for a in bundle.atoms] == expected[:MAX_ATOMS]
    assert len(bundle.working_memory) == MAX_WORKING_TURNS
    assert [t.text for t in bundle.working_memory] == [
        f"Turn {n} of today about the weather and the garden." for n in range(3, 9)
    ]
    assert 1 <= len(bundle.excerpts) <= 2
    # Archive turns, cut to 280 characters: the long diary entries, or this session's first
    # turns, which working memory no longer holds.
    working = {t.turn_id for t in bundle.working_memory}
    assert all(t.turn_id not in working and len(t.text) <= 280 for t in bundle.excerpts)
    assert response.counters.context_bundle_bytes == len(bundle.SerializeToString())

    # Long atoms: the 32 KB cap bites and the lowest-ranked atoms are the ones dropped.
    await user.seed_atoms(garden_atoms(user, long_text=True))
    heavy = await user.brief("how is my garden doing?", now)
    check_caps(heavy)
    kept = [a.atom_id for a in heavy.bundle.atoms]
    ranked = await user.retrieve("how is my garden doing?", now)
    assert 0 < len(kept) < MAX_ATOMS
    pushed = [c.doc_id for c in ranked.standing_constraints]
    assert (
        kept == (pushed + [c.doc_id for c in ranked.atoms if c.doc_id not in pushed])[: len(kept)]
    )
    assert len(heavy.bundle.SerializeToString()) <= BUNDLE_BYTES_CAP

    # The recall summary: at most 10 items and 1 KB.
    for channel in ("voice", "text"):
        items = await user.gateway.remember(user.user_id, channel=channel)
        assert 0 < len(items) <= MAX_RECALL_ITEMS
        assert sum(len(item.encode()) for item in items) <= RECALL_BYTES_CAP


def kayak_atoms() -> list[tuple[str, memory_pb2.Atom]]:
    """Equally relevant atoms, each differing from the next by one §2.11.9 signal; ids run
    against that order (except the last tie) so only the signals can produce it."""
    old, older = NOW_US - DAY_US, NOW_US - 2 * DAY_US
    stated, tool = memory_pb2.PROVENANCE_USER_STATED, memory_pb2.PROVENANCE_TOOL_DERIVED
    specs = [
        ("pinned", "atm_k9", {"pinned": True, "provenance": tool, "confidence_bp": 8000}),
        (
            "verified",
            "atm_k8",
            {"provenance": memory_pb2.PROVENANCE_VERIFIED, "confidence_bp": 8000},
        ),
        ("confidence", "atm_k7", {"confidence_bp": 9500}),
        ("last_use", "atm_k6", {"last_use_us": old, "use_count": 1}),
        ("use_count", "atm_k5", {"last_use_us": older, "use_count": 9}),
        ("tie_a", "atm_k3", {"last_use_us": older, "use_count": 3}),
        ("tie_b", "atm_k4", {"last_use_us": older, "use_count": 3}),
        ("tool", "atm_k2", {"provenance": tool, "confidence_bp": 9900}),
        (
            "inferred",
            "atm_k1",
            {"provenance": memory_pb2.PROVENANCE_INFERRED, "confidence_bp": 9900},
        ),
    ]
    atoms = []
    for name, atom_id, signals in specs:
        signals.setdefault("provenance", stated)
        signals.setdefault("confidence_bp", 9000)
        # Same text and same key length: identical BM25 scores.
        atoms.append(
            (
                name,
                seeded_atom(
                    atom_id,
                    f"preference.kayak.{atom_id[-2:]}",
                    "User enjoys kayak trips.",
                    **signals,
                ),
            )
        )
    return atoms


async def test_at_q12_mem_ordering_tiebreak(user: User) -> None:
    atoms = kayak_atoms()
    await user.seed_atoms([atom for _, atom in atoms])
    now = NOW_US + MINUTE_US
    ranked = await user.retrieve("any kayak trips?", now)
    assert len({c.relevance_micros for c in ranked.atoms}) == 1, (
        "the atoms must be equally relevant"
    )
    expected = [atom.atom_id for _, atom in atoms]

    first = await user.brief("any kayak trips?", now, "order-1")
    assert [a.atom_id for a in first.bundle.atoms] == expected
    assert [c.doc_id for c in ranked.atoms] == expected
    # The same request on the same state gives the same bytes. The gateway records the
    # clarification it asked in order-1 (state), so a fresh session gives the first
    # answer again, and order-1 settles once its question is recorded.
    assert first.bundle.HasField("clarification")
    again = await user.brief("any kayak trips?", now, "order-2")
    assert again.SerializeToString(deterministic=True) == first.SerializeToString(
        deterministic=True
    )
    settled = [await user.brief("any kayak trips?", now, "order-1") for _ in range(2)]
    assert settled[0].SerializeToString(deterministic=True) == settled[1].SerializeToString(
        deterministic=True
    )


async def test_at_q12_mem_tagging(user: User) -> None:
    await user.say("I have a dog named Rex.", NOW_US - DAY_US)
    await user.say("I play the violin.", NOW_US - 40 * DAY_US, "s-old")
    await user.say("I love jazz.", NOW_US - 29 * DAY_US, "s-old2")
    await user.say("My wife is named Anna.", NOW_US - 2 * DAY_US)
    await user.say("My wife is named Hannah.", NOW_US - DAY_US)
    await user.say("My native language is Spanish.", NOW_US - DAY_US)
    await user.set_profile(NOW_US - DAY_US, set_primary_language="fr")
    await user.seed_atoms(
        [
            seeded_atom(
                atom_id_of(user.user_id, "low"),
                "preference.sushi",
                "User likes sushi.",
                confidence_bp=6000,
            ),
            seeded_atom(
                atom_id_of(user.user_id, "inferred"),
                "preference.ramen",
                "User likes ramen.",
                confidence_bp=9500,
                provenance=memory_pb2.PROVENANCE_INFERRED,
            ),
        ]
    )
    types = {a.text: a.type for a in await user.atoms()}
    assert types["User plays the violin."] == memory_pb2.ATOM_TYPE_USER_FACT

    async def tags(query: str, session_id: str) -> dict[str, str]:
        response = await user.brief(query, NOW_US, session_id)
        return {a.text: TAG(a.tag) for a in response.bundle.atoms}

    assert (await tags("what is my dog called?", "tag-1"))[
        "User has a dog named Rex."
    ] == "MEMORY_TAG_CONFIRMED"
    assert (await tags("do I like jazz?", "tag-2"))["User loves jazz."] == "MEMORY_TAG_CONFIRMED"
    assert (await tags("should I play the violin?", "tag-3"))[
        "User plays the violin."
    ] == "MEMORY_TAG_STALE"
    food = await tags("do I like sushi or ramen?", "tag-4")
    assert food == {
        "User likes sushi.": "MEMORY_TAG_TENTATIVE",
        "User likes ramen.": "MEMORY_TAG_TENTATIVE",
    }
    wife = await tags("what is my wife called?", "tag-5")
    assert wife["User's wife is Anna."] == wife["User's wife is Hannah."] == "MEMORY_TAG_CONFLICT"
    # Current State (French) is the authority: the Spanish memory contradicts it.
    language = await tags("what is my native language?", "tag-6")
    assert language["User's native language is Spanish."] == "MEMORY_TAG_CONFLICT"


async def test_at_q12_mem_tagging_recent_use_keeps_an_atom_fresh(user: User) -> None:
    await user.seed_atoms(
        [
            seeded_atom(
                atom_id_of(user.user_id, "used"),
                "preference.cello",
                "User plays the cello.",
                created_us=NOW_US - 40 * DAY_US,
                last_use_us=NOW_US - DAY_US,
                use_count=4,
            )
        ]
    )
    response = await user.brief("should I play the cello tonight?", NOW_US)
    assert [TAG(a.tag) for a in response.bundle.atoms] == ["MEMORY_TAG_CONFIRMED"]


async def test_at_q12_mem_one_question_rule(user: User) -> None:
    await user.seed_atoms(
        [
            seeded_atom(
                atom_id_of(user.user_id, "b1"),
                "preference.boat.hull",
                "User's boat has a red hull.",
                confidence_bp=9600,
            ),
            seeded_atom(
                atom_id_of(user.user_id, "b2"),
                "preference.boat.name",
                "User's boat is called Wave.",
                confidence_bp=6500,
            ),
            seeded_atom(
                atom_id_of(user.user_id, "b3"),
                "preference.boat.mooring",
                "User's boat is moored in Kiel.",
                confidence_bp=9300,
                created_us=NOW_US - 60 * DAY_US,
            ),
            seeded_atom(
                atom_id_of(user.user_id, "b4"),
                "preference.boat.engine",
                "User's boat has an old engine.",
                confidence_bp=5000,
                provenance=memory_pb2.PROVENANCE_INFERRED,
            ),
            seeded_atom(
                atom_id_of(user.user_id, "s1"),
                "preference.sailing",
                "User enjoys sailing.",
                confidence_bp=9500,
            ),
        ]
    )
    response = await user.brief("tell me about my boat", NOW_US, "q-1")
    tags = [(a.atom_id, TAG(a.tag)) for a in response.bundle.atoms]
    uncertain = [atom_id for atom_id, tag in tags if tag != "MEMORY_TAG_CONFIRMED"]
    assert len(uncertain) == 3
    question = response.bundle.clarification
    # Exactly one question, about the top-ranked uncertain item, with its reason.
    assert question.atom_id == uncertain[0]
    assert (
        question.reason_code
        == {"MEMORY_TAG_STALE": "STALE", "MEMORY_TAG_TENTATIVE": "LOW_CONFIDENCE"}[
            dict(tags)[uncertain[0]]
        ]
    )
    assert question.text and response.counters.clarification_due_to_memory_count == 1
    # Nothing uncertain matters to these queries: no question.
    for n, query in enumerate(("do I enjoy sailing?", "what's the weather in Paris?")):
        calm = await user.brief(query, NOW_US, f"q-{n + 2}")
        assert all(a.tag == memory_pb2.MEMORY_TAG_CONFIRMED for a in calm.bundle.atoms)
        assert not calm.bundle.HasField("clarification")
        assert calm.counters.clarification_due_to_memory_count == 0


async def _hidden_residence(user: User) -> None:
    """The user's residence, made INTERNAL_ONLY in the capsule, plus a health fact."""
    await user.say("I live in Boston.", NOW_US - 2 * DAY_US, "s0")
    await user.say("I have diabetes.", NOW_US - 2 * DAY_US + MINUTE_US, "s0")
    await user.say("I love jazz.", NOW_US - 2 * DAY_US + 2 * MINUTE_US, "s0")
    marked = await user.mark(
        "identity.residence", NOW_US - DAY_US, set_exposure=memory_pb2.EXPOSURE_INTERNAL_ONLY
    )
    assert len(marked.changes) == 1
    await user.gateway.close_session(user.user_id, "s0", NOW_US - DAY_US)


async def test_at_q12_mem_no_internal_leak_in_atoms_hints_and_recall(user: User) -> None:
    await _hidden_residence(user)
    atoms = {a.text: a for a in await user.atoms()}
    hidden = atoms["User lives in Boston."]
    assert hidden.exposure == memory_pb2.EXPOSURE_INTERNAL_ONLY
    health = atoms["User has diabetes."]
    assert health.exposure == memory_pb2.EXPOSURE_SAFE_TO_TEXT
    query = "where do I live, and what about my diabetes?"
    for channel in ("voice", "text"):
        response = await user.brief(query, NOW_US, f"leak-{channel}", channel=channel)
        ids = {a.atom_id for a in response.bundle.atoms}
        assert hidden.atom_id not in ids
        assert response.bundle.clarification.atom_id != hidden.atom_id
        assert not any("Boston" in term for term in response.hints.vocabulary)
        # SAFE_TO_TEXT is used, not said, on a voice channel (seed 001 §2.11.11).
        carried = next(a for a in response.bundle.atoms if a.atom_id == health.atom_id)
        assert carried.do_not_say == (channel == "voice")
        assert response.bundle.clarification.atom_id != health.atom_id or channel == "text"
        recalled = " ".join(await user.gateway.remember(user.user_id, channel=channel))
        assert "Boston" not in recalled and "jazz" in recalled
        assert ("diabetes" in recalled) == (channel == "text")
    # The contact preference "speak" lets SAFE_TO_TEXT be spoken.
    await user.set_profile(NOW_US, set_contact_preference=state_pb.CONTACT_PREFERENCE_SPEAK)
    spoken = await user.brief(query, NOW_US + 1, "leak-speak", channel="voice")
    said = next(a for a in spoken.bundle.atoms if a.atom_id == health.atom_id)
    assert not said.do_not_say
    assert hidden.atom_id not in {a.atom_id for a in spoken.bundle.atoms}


async def test_at_q12_mem_no_internal_leak(user: User) -> None:
    await _hidden_residence(user)
    hidden = next(a for a in await user.atoms() if a.text == "User lives in Boston.")
    for session_id in ("s0", "s-next"):
        for channel in ("voice", "text"):
            response = await user.brief(
                "where do I live? remind me", NOW_US, session_id, channel=channel
            )
            text = response_text(response)
            assert hidden.atom_id not in text
            assert "Boston" not in text, f"{session_id}/{channel}: {text}"


async def test_at_q12_mem_no_credential_text_leak(user: User) -> None:
    await user.say("I love jazz.", NOW_US - 2 * DAY_US, "s0")
    await user.say("My bank PIN is 4921.", NOW_US - 2 * DAY_US + MINUTE_US, "s0")
    await user.gateway.close_session(user.user_id, "s0", NOW_US - DAY_US)
    for session_id in ("s0", "s-next"):
        response = await user.brief("what is my bank pin?", NOW_US, session_id, channel="text")
        assert "4921" not in response_text(response)
