"""A time bound covers what its clause leads to: the consequence said after it ("…for the
next week so no alcohol") and the statement a bare span of time opens ("for the next little
while, I'm typing one-handed"); never the other clauses of a turn."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.markers import TIME_BOUND, turn_markers
from memmesh.extraction.rules import turn_clauses
from memmesh.extraction.text import normalize


def bounded(text: str) -> list[bool]:
    clauses = turn_clauses(normalize(text))
    return [TIME_BOUND in markers for markers in turn_markers(clauses)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I'm on antibiotics for the next week so no alcohol", [True, True]),
        ("for the next little while, I'm typing one-handed", [True, True]),
        ("No caffeine till Friday. Blood test.", [True, False]),
        # A bound in one sentence leaves the next one alone.
        ("I'm off dairy this week. I'm vegetarian, always", [True, False, False]),
        # A clause with a subject of its own after a bounded one states its own thing.
        ("I'm vegetarian, tonight I'm cooking pasta", [False, True]),
        ("tonight I'm cooking pasta, I'm vegetarian", [True, False]),
        # "these days" tells what holds now, as "nowadays" does.
        ("my hobby these days is restoring old clocks", [False]),
    ],
)
def test_a_time_bound_covers_its_consequence_and_the_span_it_opens(
    text: str, expected: list[bool]
) -> None:
    assert bounded(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I'm on antibiotics for the next week so no alcohol",
        "No caffeine till Friday. Blood test.",
        "for the next little while, until the cast comes off, I'm typing one-handed",
    ],
)
def test_a_limit_for_a_while_is_no_standing_fact(text: str) -> None:
    assert extract(text).facts == ()
    assert default_hybrid_extractor().extract(text).facts == ()


def test_a_lasting_fact_beside_a_bounded_one_is_kept() -> None:
    facts = default_hybrid_extractor().extract("tonight I'm cooking pasta, I'm vegetarian").facts
    assert [f.category for f in facts] == ["constraint"]
    assert "vegetarian" in facts[0].text.lower()
