"""A clause that is a fact said alone stays one after "and" in a longer turn; what belongs
together ("salt and pepper", "my husband and I") or goes on telling an event stays whole."""

import pytest

from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.units import Unit, opens_statement, turn_units
from memmesh.extraction.text import normalize, split_clauses


def _facts(text):
    return [f.text for f in default_hybrid_extractor().extract(text).facts]


@pytest.mark.parametrize(
    ("turn", "second"),
    [
        (
            "I teach chemistry at a high school and I play the cello in a community orchestra",
            "cello",
        ),
        ("I'm a retired firefighter and my hobby these days is building model ships", "ships"),
        ("I'm a night nurse and also I sing in a choir on Thursdays", "choir"),
        ("I'm a pharmacist and I drive a blue Volvo", "volvo"),
        ("I work as a physiotherapist and I swim laps every morning", "swim"),
    ],
)
def test_second_clause_after_and_is_still_a_fact(turn, second):
    facts = _facts(turn)
    assert len(facts) == 2
    assert any(second in fact.lower() for fact in facts)


def test_the_clause_alone_and_inside_the_turn_read_the_same():
    alone = _facts("I play the cello in a community orchestra")
    inside = _facts(
        "I teach chemistry at a high school and I play the cello in a community orchestra"
    )
    assert alone[0] in inside


@pytest.mark.parametrize(
    "turn",
    [
        "I always cook with salt and pepper",
        "I love salt and pepper chips",
        "my husband and I run a bakery",
        "my wife and I go hiking every weekend",
        "I'm an architect and I think that's about it",
    ],
)
def test_what_belongs_together_stays_one_fact_or_none(turn):
    assert len(_facts(turn)) <= 1


@pytest.mark.parametrize(
    "turn",
    [
        "I slipped on the ice today and my knee swelled up",
        "I bumped my head this morning and I needed ice",
    ],
)
def test_a_past_clause_after_a_one_off_event_tells_the_event(turn):
    assert _facts(turn) == []


def test_a_role_before_and_is_not_cut_off_with_the_and():
    clauses = [c.text for c in split_clauses(normalize("I work as a welder and I fish on Sundays"))]
    assert clauses == ["I work as a welder", "I fish on Sundays"]
    assert normalize("as a welder I work nights") == "as a welder, I work nights"


def _units(text) -> list[Unit]:
    return turn_units(normalize(text))


def test_a_clause_opening_on_the_user_after_and_opens_a_statement():
    first, second = _units("I'm a welder and I fish on Sundays")
    assert opens_statement(first)
    assert opens_statement(second)


@pytest.mark.parametrize(
    "turn",
    [
        "I'm a welder because my dad was one",
        "my sister is a welder, she works nights",
        "I'm a welder and it pays well",
    ],
)
def test_a_reason_a_pronoun_or_a_bare_comma_opens_no_statement(turn):
    units = _units(turn)
    assert len(units) == 2
    assert not opens_statement(units[1])


@pytest.mark.parametrize(
    ("turn", "clauses"),
    [
        (
            "missed the 7:40 bus. no car, never learned to drive.",
            ["missed the 7:40 bus", "no car", "never learned to drive"],
        ),
        (
            "I walk 10,000 steps a day: rain or shine",
            ["I walk 10,000 steps a day", "rain or shine"],
        ),
        ("kids: 7, 4 and 2", ["kids", "7", "4 and 2"]),
    ],
)
def test_a_number_or_a_time_is_not_cut_at_its_comma_or_colon(turn, clauses):
    assert [c.text for c in split_clauses(normalize(turn))] == clauses
