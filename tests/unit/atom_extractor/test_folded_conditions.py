"""A condition told with its cause or consequence is one fact; two conditions stay two
(labelling rule 6: one fact per distinct item)."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.folding import fold_consequences
from memmesh.extraction.model import ExtractedFact, FactType


@pytest.mark.parametrize(
    "text, key, tokens",
    [
        (
            "I have the fear of the water, I cannot swim and I don't go in boats",
            "constraint.fear.water",
            ["fear", "water", "cannot swim"],
        ),
        (
            "I cannot eat the gluten, I have celiac disease from childhood.",
            "constraint.medical.celiac_disease",
            ["celiac", "cannot eat the gluten"],
        ),
        (
            "heads up, I'm allergic to latex, like seriously allergic",
            "constraint.allergy.latex",
            ["allergic to latex"],
        ),
    ],
)
def test_a_condition_and_its_limit_are_one_fact(text, key, tokens):
    facts = extract(text).facts
    assert [f.key for f in facts] == [key], facts
    assert all(t in facts[0].text.lower() for t in tokens), facts[0].text
    # The evidence covers both clauses, as said.
    assert facts[0].evidence_span in text


@pytest.mark.parametrize(
    "text, keys",
    [
        ("I'm vegan and I can't have gluten", ["constraint.diet", "constraint.diet.gluten"]),
        # A diet beside a limit may be two items: only cause-and-effect words join them.
        ("I'm vegan, I can't have gluten either", ["constraint.diet", "constraint.diet.gluten"]),
        (
            "I'm allergic to peanuts, and I'm lactose intolerant",
            ["constraint.allergy.peanut", "constraint.diet.lactose"],
        ),
        ("I'm diabetic. I love hiking.", ["constraint.medical.diabetes", "preference.hiking"]),
    ],
)
def test_two_items_stay_two_facts(text, keys):
    assert [f.key for f in extract(text).facts] == keys


def _fact(text: str, key: str, span: str, category: str = "constraint") -> ExtractedFact:
    return ExtractedFact(text, category, FactType.USER_FACT, 8800, key, (), span)


TURN = "I have sickle cell, so cold weather and dehydration are real risks for me"
SICKLE = _fact("User has sickle cell.", "constraint.medical.sickle_cell", "I have sickle cell")
RISKS = _fact(
    "User's limit: dehydration are real risks for them.",
    "constraint.learned.dehydration_risk",
    "dehydration are real risks for me",
)


def test_a_causal_link_folds_a_learned_limit_into_its_condition():
    [fact] = fold_consequences([SICKLE, RISKS], TURN)
    assert fact.key == SICKLE.key
    assert fact.text == "User has sickle cell; dehydration are real risks for them."
    assert fact.evidence_span == TURN


def test_the_limit_said_first_folds_into_the_condition_after_because():
    turn = "I avoid raw fish because I'm on immunosuppressants"
    avoid = _fact("User avoids raw fish.", "constraint.learned.raw_fish", "I avoid raw fish")
    drug = _fact(
        "User is on immunosuppressants.",
        "constraint.learned.immunosuppressant",
        "I'm on immunosuppressants",
    )
    [fact] = fold_consequences([avoid, drug], turn)
    assert fact.text == "User is on immunosuppressants, and avoids raw fish."


def test_the_learned_lead_is_not_read_as_a_limit():
    # "User's limit:" is how a learned fact is written, not what the user said.
    turn = "I've got Crohn's, diagnosed when I was nineteen"
    crohns = _fact("User has Crohn's.", "constraint.medical.crohn_s", "I've got Crohn's")
    when = _fact(
        "User's limit: diagnosed when they was nineteen.",
        "constraint.learned.diagnosed",
        "diagnosed when I was nineteen",
    )
    assert fold_consequences([crohns, when], turn) == [crohns, when]


def test_nothing_folds_across_and_or_a_negated_condition():
    turn = "I'm not allergic, I just don't like cake"
    not_allergic = _fact(
        "User is not allergic.", "constraint.learned.not_allergic", "I'm not allergic"
    )
    cake = _fact(
        "User doesn't like cake.", "preference.cake", "I just don't like cake", "preference"
    )
    assert fold_consequences([cake, not_allergic], turn) == [cake, not_allergic]
    turn = "I have sickle cell and dehydration are real risks for me"
    assert fold_consequences([SICKLE, RISKS], turn) == [SICKLE, RISKS]


def test_facts_not_found_in_the_turn_are_left_as_they_are():
    assert fold_consequences([RISKS, SICKLE], "something else entirely") == [RISKS, SICKLE]
