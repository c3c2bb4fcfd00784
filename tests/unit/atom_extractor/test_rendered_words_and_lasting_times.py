"""What the extractor writes is grounded in what was said even where its own words differ
("goes" for "go", "years old", "they're", "mine's" as "mine is"), and words that only look
time-bound or hypothetical ("every Sunday morning", "I work at the airport", "I'd never",
"I will never") leave a lasting fact alone; each allergen of a list is a fact of its own."""

import pytest

from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.markers import HYPOTHETICAL, PLAN, TIME_BOUND, turn_markers
from memmesh.extraction.rules import turn_clauses
from memmesh.extraction.text import normalize, third_person


def _facts(text: str) -> list[str]:
    return [f.text for f in default_hybrid_extractor().extract(text).facts]


def _markers(text: str) -> frozenset[str]:
    return turn_markers(turn_clauses(normalize(text)))[0]


@pytest.mark.parametrize(
    "text, fact",
    [
        # The renderer's "goes" and "years old" were missing from the source for the gate.
        ("I always go for a plain margherita", "User always goes for a plain margherita."),
        ("I'm 43, in case that changes the insurance quote", "User is 43 years old."),
    ],
)
def test_the_renderers_own_words_do_not_fail_the_grounding_gate(text: str, fact: str) -> None:
    assert fact in _facts(text)


def test_mine_s_is_mine_is() -> None:
    assert third_person("mine's Frasier") == "theirs is Frasier"
    assert any("Frasier" in f for f in _facts("everyone has a comfort show? mine's Frasier."))


def test_a_habit_verb_that_needs_an_object_says_nothing_without_one() -> None:
    assert not any(f.startswith("User never goes") for f in _facts("I never go, even if asked"))
    # One that stands alone still is a habit.
    assert _facts("I never drink") == ["User never drinks."]


@pytest.mark.parametrize(
    "text, bounded",
    [
        ("nothing beats a long bike ride on sunday mornings", False),
        ("I work nights at the airport", False),
        ("I'm stuck at the airport", True),
        ("the bike ride on sunday was lovely", True),
    ],
)
def test_what_keeps_happening_is_not_time_bound(text: str, bounded: bool) -> None:
    assert (TIME_BOUND in _markers(text)) is bounded


@pytest.mark.parametrize(
    "text, marker, present",
    [
        ("I'd never willingly eat an olive", HYPOTHETICAL, False),
        ("I'd never been to Japan before", HYPOTHETICAL, True),
        ("I'd love a bigger kitchen", HYPOTHETICAL, True),
        ("the one snack I will never say no to is salted licorice", PLAN, False),
        ("I will call her about it", PLAN, True),
    ],
)
def test_a_refusal_for_good_is_neither_hypothetical_nor_a_plan(
    text: str, marker: str, present: bool
) -> None:
    assert (marker in _markers(text)) is present


@pytest.mark.parametrize(
    "text, facts",
    [
        (
            "I'm allergic to peanuts and shellfish",
            ["User is allergic to peanuts.", "User is allergic to shellfish."],
        ),
        # A clause after "and" is no second allergen.
        (
            "I am allergic to sesame and everything had it.",
            ["User is allergic to sesame and everything had it."],
        ),
    ],
)
def test_each_allergen_listed_is_a_fact_of_its_own(text: str, facts: list[str]) -> None:
    assert _facts(text) == facts
