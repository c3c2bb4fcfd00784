"""What the bundle's digests already say is not said again: the bytes go to digests that say
something else."""

from __future__ import annotations

from composer_fakes import pass_all, query

from memmesh.engines.context_composer.domain.assemble import (
    MAX_DIGESTS,
    compose_bundle,
    guard_plan,
    without_repeats,
)
from memmesh.engines.context_composer.domain.model import (
    Digest,
    Gathered,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.domain.text import sentences_of
from memmesh.engines.context_composer.mapping import bundle_size


def compose(retrieved: Retrieved):  # type: ignore[no-untyped-def]
    q = query("what did I do")
    gathered = Gathered(UserFacts(), retrieved, SessionMemory())
    plan = guard_plan(q, gathered)
    return compose_bundle(q, gathered, plan, pass_all(plan.items), bundle_size)


SESSION = Digest(
    "s1",
    "Session",
    "We went camping at the lake. Wow, Mel! The kids loved the pottery class.",
    ("t1", "t3", "t5"),
    "s1",
)
EPISODE = Digest(
    "s1#e2", "Pottery", "The kids loved the pottery class. They made a bowl.", ("t5", "t6"), "s1"
)
REPEAT = Digest("s1#e1", "Camping", "We went camping at the lake. Wow, Mel!", ("t1", "t2"), "s1")


def test_sentences_split_after_their_closing_mark_and_keep_it() -> None:
    assert sentences_of("One. Two! Three? Four… five") == [
        "One.",
        "Two!",
        "Three?",
        "Four…",
        "five",
    ]


def test_a_sentence_an_earlier_digest_holds_is_left_out_of_a_later_one() -> None:
    kept = without_repeats([SESSION, EPISODE])
    assert [d.summary for d in kept] == [SESSION.summary, "They made a bowl."]
    # t5 is cited once, by the digest that quotes it first; the later one cites what only
    # it says.
    assert kept[0].evidence_turn_ids == SESSION.evidence_turn_ids
    assert kept[1].evidence_turn_ids == ("t6",)


def test_a_turn_an_earlier_digest_cites_is_not_cited_again() -> None:
    other_episode = Digest("s1#e3", "Lake", "The lake was cold.", ("t1", "t4"), "s1")
    kept = without_repeats([SESSION, other_episode])
    assert kept[1].summary == other_episode.summary
    assert kept[1].evidence_turn_ids == ("t4",)


def test_a_digest_saying_nothing_new_makes_room_for_the_next_one() -> None:
    others = tuple(
        Digest(f"d{i:02d}", "title", f"Summary {i}.", (f"t{100 + i}",)) for i in range(MAX_DIGESTS)
    )
    composed = compose(Retrieved(digests=(SESSION, REPEAT, *others)))
    ids = [d.digest_id for d in composed.bundle.digests]
    assert "s1#e1" not in ids
    assert ids == ["s1", *(d.digest_id for d in others[: MAX_DIGESTS - 1])]
