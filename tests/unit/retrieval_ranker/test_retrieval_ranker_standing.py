"""Standing constraints reach every request that could touch them: by the request's words,
by meaning (the shared sentence encoder), and always when there is no encoder."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
from ranker_fakes import ANALYZER, TENANT, USER, atom, atom_doc, new_service

from memmesh.common.v1 import memory_pb2
from memmesh.embedding import default_encoder
from memmesh.engines.retrieval_ranker.domain.documents import Caps
from memmesh.engines.retrieval_ranker.domain.reach import ConstraintReach, Vectors
from memmesh.engines.retrieval_ranker.domain.user_index import MAX_STANDING
from memmesh.runtime import deadlines

CAPS = Caps(max_atoms=20, max_turns=5, max_digests=5)
CONSTRAINTS = ("User is allergic to peanuts.", "User is vegetarian.")
# The requests of the issue: none names the allergy or the diet.
TOUCHING = (
    "what should I cook tonight?",
    "any ideas for movie-night snacks?",
    "plan a weekend in Lisbon",
    "should I take something for this headache",
)
UNRELATED = (
    "what's 12 times 7",
    "set a timer for ten minutes",
    "tell me about black holes",
    "convert 5 miles to km",
    "how tall is Everest",
)


class BrokenEncoder:
    def encode(self, texts: Sequence[str]) -> Vectors:
        raise RuntimeError("no model")


@pytest.fixture(scope="module")
def reach() -> ConstraintReach:
    return ConstraintReach(default_encoder())


@pytest.mark.parametrize("query", TOUCHING)
def test_the_issue_requests_touch_the_constraints_by_meaning_alone(
    reach: ConstraintReach, query: str
) -> None:
    # names_domain=False: the word list is left out, the encoder decides on its own.
    assert reach.touches(query, False, CONSTRAINTS)
    assert ANALYZER.names_constraint_domain(ANALYZER.query_terms(query))


@pytest.mark.parametrize("query", UNRELATED)
def test_unrelated_requests_do_not_touch_them(reach: ConstraintReach, query: str) -> None:
    assert not ANALYZER.names_constraint_domain(ANALYZER.query_terms(query))
    assert not reach.touches(query, False, CONSTRAINTS)
    assert not reach.touches(query, False, CONSTRAINTS)  # the same answer every time


def test_a_request_about_the_constraint_itself_touches_it(reach: ConstraintReach) -> None:
    assert reach.touches("is a peanut butter cookie ok for me", False, CONSTRAINTS)


def test_without_an_encoder_or_with_a_broken_one_every_request_touches_them() -> None:
    for fallback in (ConstraintReach(None), ConstraintReach(BrokenEncoder())):
        assert fallback.touches("how tall is Everest", False, CONSTRAINTS)
        assert not fallback.touches("how tall is Everest", False, ())


class CountingEncoder:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return default_encoder().encode(texts)


def test_warming_encodes_the_domain_examples_once_before_any_request() -> None:
    encoder = CountingEncoder()
    warmed = ConstraintReach(encoder)
    warmed.warm()
    warmed.warm()
    examples = list(encoder.texts)
    assert len(examples) == len(set(examples)) > 0
    encoder.texts.clear()
    assert warmed.touches("what should I cook tonight?", False, CONSTRAINTS)
    assert encoder.texts == ["what should I cook tonight?"]


def test_each_constraint_is_encoded_once_whatever_the_requests_and_again_after_an_erasure() -> None:
    encoder = CountingEncoder()
    reach = ConstraintReach(encoder)
    reach.warm()
    encoder.texts.clear()
    for query in UNRELATED:  # far from every domain example: the constraints are compared
        assert not reach.touches(query, False, CONSTRAINTS)
    assert sorted(t for t in encoder.texts if t in CONSTRAINTS) == sorted(CONSTRAINTS)
    encoder.texts.clear()
    reach.forget_constraints()
    assert not reach.touches(UNRELATED[0], False, CONSTRAINTS)
    assert sorted(encoder.texts) == sorted([UNRELATED[0], *CONSTRAINTS])


def test_the_kept_constraint_vectors_are_bounded() -> None:
    encoder = CountingEncoder()
    reach = ConstraintReach(encoder, cache_size=1)
    reach.warm()
    encoder.texts.clear()
    reach.touches(UNRELATED[0], False, CONSTRAINTS)
    reach.touches(UNRELATED[1], False, CONSTRAINTS)
    # With room for one vector the two constraints push each other out.
    assert [t for t in encoder.texts if t in CONSTRAINTS] == [*CONSTRAINTS, *CONSTRAINTS]


def test_warming_with_a_broken_encoder_keeps_the_safe_fallback() -> None:
    broken = ConstraintReach(BrokenEncoder())
    broken.warm()
    assert broken.touches("how tall is Everest", False, CONSTRAINTS)


def allergy(atom_id: str = "c-allergy", **fields: object) -> memory_pb2.Atom:
    return atom(
        atom_id,
        "User is allergic to peanuts.",
        "constraint.allergy",
        category=memory_pb2.ATOM_CATEGORY_CONSTRAINT,
        exposure=memory_pb2.EXPOSURE_SAFE_TO_TEXT,
        **fields,
    )


def capsule() -> list[memory_pb2.Atom]:
    return [
        allergy(),
        atom(
            "c-diet",
            "User is vegetarian.",
            "constraint.diet",
            category=memory_pb2.ATOM_CATEGORY_CONSTRAINT,
        ),
        atom("c-vim", "User uses vim.", "constraint.tool.vim"),
        atom("p-jazz", "User loves jazz.", "preference.music"),
        atom("r-sister", "User's sister is Sarah.", "relationship.sister"),
    ]


def standing_ids(retrieval) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.doc.doc_id for c in retrieval.standing]


async def test_retrieve_returns_the_standing_constraints_a_request_could_touch(
    reach: ConstraintReach,
) -> None:
    service = new_service(reach=reach)
    await service.upsert(TENANT, USER, [atom_doc(a) for a in capsule()])
    for query in TOUCHING:
        result = await service.retrieve(TENANT, USER, query, CAPS)
        assert sorted(standing_ids(result)) == ["c-allergy", "c-diet"], query
    for query in ("how tall is Everest", "what is my sister called", "what do you remember"):
        assert standing_ids(await service.retrieve(TENANT, USER, query, CAPS)) == [], query


async def test_superseded_removed_and_other_users_constraints_are_never_pushed() -> None:
    service = new_service()  # no encoder: every non-generic request touches them
    await service.upsert(TENANT, USER, [atom_doc(a) for a in capsule()])
    assert standing_ids(await service.retrieve(TENANT, USER, "how tall is Everest", CAPS)) == [
        "c-allergy",
        "c-diet",
    ]
    superseded = allergy(status=memory_pb2.ATOM_STATUS_SUPERSEDED)
    await service.upsert(TENANT, USER, [atom_doc(superseded)])
    await service.remove(TENANT, USER, ["c-diet"])
    assert standing_ids(await service.retrieve(TENANT, USER, "dinner ideas", CAPS)) == []
    assert standing_ids(await service.retrieve(TENANT, "user-2", "dinner ideas", CAPS)) == []


async def test_at_most_eight_are_pushed_in_the_seed_order() -> None:
    service = new_service()
    many = [allergy(f"c-{i:02d}", confidence_bp=5000 + i) for i in range(12)]
    await service.upsert(TENANT, USER, [atom_doc(a) for a in many])
    pushed = standing_ids(await service.retrieve(TENANT, USER, "dinner ideas", CAPS))
    assert pushed == [f"c-{i:02d}" for i in range(11, 11 - MAX_STANDING, -1)]


class SlowEncoder:
    """Answers like the real encoder, its first call after a pause longer than the call's
    time share (once: the domain examples are encoded one call each, in the background)."""

    def __init__(self, pause_s: float) -> None:
        self._pause_s = pause_s

    def encode(self, texts: Sequence[str]) -> Vectors:
        pause, self._pause_s = self._pause_s, 0.0
        time.sleep(pause)
        return default_encoder().encode(texts)


async def test_an_encoder_slower_than_its_time_share_pushes_them_rather_than_delay_the_brief() -> (
    None
):
    service = new_service(reach=ConstraintReach(SlowEncoder(2.0)))
    await service.upsert(TENANT, USER, [atom_doc(a) for a in capsule()])
    # Loaded before the clock starts: the query's vector and the index, read once a process.
    await service.retrieve(TENANT, USER, "dinner ideas", CAPS)
    deadlines.set_inbound_deadline(0.1)
    try:
        started = time.perf_counter()
        result = await service.retrieve(TENANT, USER, "how tall is Everest", CAPS)
        # Far under the encoder's 2 s: the Brief did not wait for it (however busy the host).
        assert time.perf_counter() - started < 1.0
    finally:
        deadlines.set_inbound_deadline(None)
    assert standing_ids(result) == ["c-allergy", "c-diet"]
