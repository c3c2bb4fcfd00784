"""Relevance, the seed 001 §2.11.9 order and its tie-breakers, caps, the generic-query rule."""

from __future__ import annotations

from ranker_fakes import atom, atom_doc, digest, digest_doc, turn, turn_doc

from memmesh.common.v1 import memory_pb2
from memmesh.engines.retrieval_ranker.domain.documents import Caps
from memmesh.engines.retrieval_ranker.domain.ranking import RankingPolicy
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import UserIndex

ANALYZER = Analyzer()
CAPS = Caps(max_atoms=20, max_turns=5, max_digests=5)
VERIFIED, USER_STATED, TOOL, INFERRED = (
    memory_pb2.PROVENANCE_VERIFIED,
    memory_pb2.PROVENANCE_USER_STATED,
    memory_pb2.PROVENANCE_TOOL_DERIVED,
    memory_pb2.PROVENANCE_INFERRED,
)


def ids(candidates) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.doc.doc_id for c in candidates]


def retrieve(index: UserIndex, query: str, caps: Caps = CAPS):  # type: ignore[no-untyped-def]
    return index.retrieve(ANALYZER.query_terms(query), caps)


def test_stemming_matches_other_word_forms() -> None:
    index = UserIndex(
        docs=[
            atom_doc(atom("a1", "User goes running every morning.")),
            atom_doc(atom("a2", "User likes tea.")),
        ]
    )
    assert ids(retrieve(index, "does she still run?").atoms) == ["a1"]
    assert ANALYZER.terms("The sisters' running shoes") == ["sister", "run", "shoe"]


def test_past_forms_of_irregular_verbs_meet_their_base_form() -> None:
    index = UserIndex(
        docs=[
            turn_doc(turn("t1", "I grew up in Guadalajara, then we went to Lyon", 10)),
            turn_doc(turn("t2", "my sister taught me to swim", 20)),
            turn_doc(turn("t3", "we talked about the city budget", 30)),
        ]
    )
    assert ids(retrieve(index, "where did I grow up?").turns) == ["t1"]
    assert ids(retrieve(index, "who teaches me?").turns) == ["t2"]
    # Words as often something else keep their own form: "a bit" is no bite.
    assert ANALYZER.terms("a bit of French, she left") == ["bit", "french", "left"]


def test_stop_words_alone_match_nothing_specific() -> None:
    assert ANALYZER.query_terms("what is it that you have") == ()


def test_key_segments_and_critical_tokens_count_as_terms() -> None:
    sister = atom(
        "a1", "Her name is lovely.", key="relationship.sister.name", critical_tokens=["Sarah"]
    )
    other = atom("a2", "User has a dog.", key="relationship.pet")
    index = UserIndex(docs=[atom_doc(sister), atom_doc(other)])
    assert ids(retrieve(index, "what is my sister called").atoms) == ["a1"]
    assert ids(retrieve(index, "Sarah's birthday").atoms) == ["a1"]


def test_order_is_pinned_then_provenance_then_confidence_then_last_use_then_use_count_then_id() -> (
    None
):
    text = "User plays chess."
    atoms = [
        atom("z-pinned", text, pinned=True, provenance=INFERRED, confidence_bp=1000),
        atom("y-verified", text, provenance=VERIFIED, confidence_bp=1000),
        atom("x-stated-high", text, provenance=USER_STATED, confidence_bp=9000),
        atom(
            "w-stated-low-recent",
            text,
            provenance=USER_STATED,
            confidence_bp=5000,
            last_use_time=300,
        ),
        atom(
            "v-stated-low-old-used",
            text,
            provenance=USER_STATED,
            confidence_bp=5000,
            last_use_time=100,
            use_count=9,
        ),
        atom(
            "u-stated-low-old",
            text,
            provenance=USER_STATED,
            confidence_bp=5000,
            last_use_time=100,
            use_count=1,
        ),
        atom("b-tie", text, provenance=TOOL, confidence_bp=5000),
        atom("a-tie", text, provenance=TOOL, confidence_bp=5000),
        atom("c-inferred", text, provenance=INFERRED, confidence_bp=9999),
    ]
    index = UserIndex(docs=[atom_doc(a) for a in reversed(atoms)])
    assert ids(retrieve(index, "chess").atoms) == [
        "z-pinned",
        "y-verified",
        "x-stated-high",
        "w-stated-low-recent",
        "v-stated-low-old-used",
        "u-stated-low-old",
        "a-tie",
        "b-tie",
        "c-inferred",
    ]


def test_relevance_decides_candidates_not_the_signals() -> None:
    index = UserIndex(
        docs=[
            atom_doc(atom("pinned", "User owns a blue bicycle.", pinned=True, provenance=VERIFIED)),
            atom_doc(atom("tea", "User drinks green tea every afternoon.", provenance=INFERRED)),
        ]
    )
    assert ids(retrieve(index, "green tea").atoms) == ["tea"]


def test_cap_keeps_the_strongest_band_before_the_signals() -> None:
    strong = [
        atom(f"s{n:02d}", "User loves hiking in the alps mountains.", provenance=INFERRED)
        for n in range(3)
    ]
    weak = [
        atom(
            f"w{n:02d}",
            "User bought mountains of paper for the office printer today.",
            pinned=True,
            provenance=VERIFIED,
        )
        for n in range(5)
    ]
    index = UserIndex(docs=[atom_doc(a) for a in strong + weak])
    result = retrieve(index, "hiking in the alps mountains", Caps(3, 0, 0))
    assert ids(result.atoms) == ["s00", "s01", "s02"]
    assert {c.tier for c in result.atoms} == {0}


def test_cap_is_never_exceeded_and_picks_by_the_order_inside_a_band() -> None:
    atoms = [atom(f"a{n:02d}", "User collects stamps.", confidence_bp=100 * n) for n in range(30)]
    index = UserIndex(docs=[atom_doc(a) for a in atoms])
    result = retrieve(index, "stamps", Caps(max_atoms=20, max_turns=0, max_digests=0))
    assert ids(result.atoms) == [f"a{n:02d}" for n in range(29, 9, -1)]
    assert retrieve(index, "stamps", Caps(0, 0, 0)).atoms == ()


def test_relevance_floor_drops_weak_matches() -> None:
    docs = [
        atom_doc(
            atom(
                "strong",
                "Sister Sarah lives in Lisbon near the river Tagus.",
                key="relationship.sister",
            )
        )
    ]
    docs += [atom_doc(atom(f"filler{n}", f"User mentioned river number {n}.")) for n in range(10)]
    result = retrieve(UserIndex(docs=docs), "where does my sister Sarah live in Lisbon")
    assert ids(result.atoms) == ["strong"]
    assert result.atoms[0].relevance_micros > 0


def test_superseded_atoms_are_never_returned() -> None:
    old = atom(
        "old", "User lives in Porto.", key="home.city", status=memory_pb2.ATOM_STATUS_SUPERSEDED
    )
    new = atom("new", "User lives in Lisbon.", key="home.city")
    index = UserIndex(docs=[atom_doc(old), atom_doc(new)])
    assert ids(retrieve(index, "where do I live, Porto?").atoms) == ["new"]
    assert ids(retrieve(index, "").atoms) == ["new"]


def test_turns_and_digests_order_by_relevance_then_newer_time_then_id() -> None:
    index = UserIndex(
        docs=[
            turn_doc(turn("t1", "we talked about the garden", 100)),
            turn_doc(turn("t2", "the garden, the garden!", 50)),
            turn_doc(turn("t4", "we talked about the garden", 300)),
            turn_doc(turn("t3", "we talked about the garden", 300)),
            digest_doc(digest("d1", "Garden", "Planning the garden.", 10)),
            digest_doc(digest("d2", "Garden", "Planning the garden.", 20)),
        ]
    )
    result = retrieve(index, "garden")
    assert ids(result.turns) == ["t2", "t3", "t4", "t1"]
    assert ids(result.digests) == ["d2", "d1"]
    assert ids(retrieve(index, "garden", Caps(0, 2, 1)).turns) == ["t2", "t3"]


def test_generic_query_uses_the_order_alone_newest_digests_and_no_turns() -> None:
    index = UserIndex(
        docs=[
            atom_doc(atom("a1", "User likes jazz.", provenance=INFERRED)),
            atom_doc(atom("a2", "User is a nurse.", provenance=VERIFIED)),
            turn_doc(turn("t1", "hello there", 5)),
            digest_doc(digest("d1", "Old", "Old talk.", 1)),
            digest_doc(digest("d2", "New", "New talk.", 2)),
        ]
    )
    for query in ("What do you remember about me?", "", "what do you know"):
        result = retrieve(index, query)
        assert result.generic_query
        assert ids(result.atoms) == ["a2", "a1"]
        assert ids(result.turns) == []
        assert ids(result.digests) == ["d2", "d1"]


def test_same_documents_in_any_insertion_order_give_identical_results() -> None:
    docs = [
        atom_doc(atom(f"a{n}", f"User likes item {n % 3} and tea", confidence_bp=n % 4))
        for n in range(12)
    ]
    docs += [turn_doc(turn(f"t{n}", f"tea talk {n % 5}", n % 3)) for n in range(12)]
    first, second = UserIndex(docs=docs), UserIndex(docs=list(reversed(docs)))
    assert retrieve(first, "tea item 2") == retrieve(second, "tea item 2")
    assert first.checksum() == second.checksum()


def test_removed_documents_leave_results_and_checksum() -> None:
    docs = [atom_doc(atom("a1", "User likes tea.")), atom_doc(atom("a2", "User likes green tea."))]
    index = UserIndex(docs=docs)
    before = index.checksum()
    assert index.remove("a2")
    assert not index.remove("a2")
    assert ids(retrieve(index, "green tea").atoms) == ["a1"]
    assert index.checksum() == UserIndex(docs=docs[:1]).checksum() != before


def test_an_id_is_unique_across_kinds() -> None:
    index = UserIndex(docs=[atom_doc(atom("x", "User likes tea."))])
    index.upsert(turn_doc(turn("x", "tea", 1)))
    result = retrieve(index, "tea")
    assert (ids(result.atoms), ids(result.turns)) == ([], ["x"])


def test_policy_bands_are_equal_slices_between_best_and_floor() -> None:
    policy = RankingPolicy()
    scores = (1_000_000, 812_501, 812_500, 625_001, 625_000, 250_000, 249_999)
    assert [policy.tier(score, 1_000_000) for score in scores] == [0, 0, 1, 1, 2, 3, None]
    assert policy.tier(0, 0) is None
