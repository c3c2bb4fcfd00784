"""A lasting constraint is the user's however it is said: an allergen named earlier in the
sentence than the allergy, an allergy named as a noun on the day it was found out, a condition
named on the way to something else."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor


def constraints_of(text: str) -> list[str]:
    return [
        f.text for f in default_hybrid_extractor().extract(text).facts if f.category == "constraint"
    ]


@pytest.mark.parametrize(
    "text, fact",
    [
        ("the dessert had walnuts in it and I'm severely allergic", "User is allergic to walnuts."),
        (
            "they gave me amoxicillin at the clinic, turns out I'm allergic",
            "User is allergic to amoxicillin.",
        ),
        ("the nurse flagged a latex allergy on my file today", "User has a latex allergy."),
        ("new GP today. mustard allergy.", "User has a mustard allergy."),
    ],
)
def test_an_allergy_and_its_allergen_said_apart(text: str, fact: str) -> None:
    assert fact in constraints_of(text)


@pytest.mark.parametrize(
    "text",
    [
        "my wife Ines has a sesame allergy so we cook without it",
        "Tomas has a shellfish allergy",
        "she's allergic, the menu was all shrimp",
    ],
)
def test_someone_elses_allergy_is_not_the_users(text: str) -> None:
    assert not any(
        f.startswith("User is allergic") or f.startswith("User has a") for f in constraints_of(text)
    )


@pytest.mark.parametrize(
    "text, fact",
    [
        (
            "finished the 10k in under an hour, decent for someone with arthritis",
            "User has arthritis.",
        ),
        ("being coeliac at a bakery open day is torture", "User is coeliac."),
        ("the stairs at the station are hard with my bad knee", "User has a bad knee."),
    ],
)
def test_a_condition_named_in_passing(text: str, fact: str) -> None:
    assert fact in constraints_of(text)


def test_someone_elses_condition_in_passing_is_not_the_users() -> None:
    said = "my dad with his bad knee can't do the stairs"
    assert not any(f.startswith("User has") for f in constraints_of(said))


def test_a_hyphenated_qualifier_keeps_the_condition() -> None:
    assert "User is red-green colour blind." in constraints_of(
        "pick me a jumper colour, I'm red-green colour blind so name the colours"
    )


@pytest.mark.parametrize(
    "text, trigger",
    [
        ("whenever I eat shrimp I get hives all over", "shrimp"),
        ("I come out in hives from penicillin", "penicillin"),
        ("I get migraines from aged cheese", "aged cheese"),
    ],
)
def test_a_reaction_and_its_trigger_is_a_standing_limit(text: str, trigger: str) -> None:
    assert any(trigger in found for found in constraints_of(text))


def test_a_reaction_to_no_trigger_of_the_body_is_no_limit() -> None:
    assert constraints_of("I get bored from long meetings") == []


def test_a_fear_held_all_along_is_a_constraint() -> None:
    assert "User is terrified of wasps." in constraints_of("I've always been terrified of wasps")


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Lamb I cannot eat, my religion does not allow it.", "User cannot eat lamb."),
        ("Shellfish I can't eat.", "User can't eat shellfish."),
        ("Red wine I never drink", "User never drinks red wine."),
        ("Red Bull I cannot drink", "User cannot drink Red Bull."),
    ],
)
def test_a_thing_said_before_not_being_able_to_eat_it_is_a_limit(text: str, fact: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert [(f.category, f.text) for f in facts] == [("constraint", fact)]


@pytest.mark.parametrize("text", ["after surgery I can't eat", "Now I can't eat"])
def test_a_time_before_not_eating_is_no_thing_disliked(text: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert not any(f.category == "preference" for f in facts), facts


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # The schedule said before the medicine, or in the clause after it of the medicine.
        (
            "please remind me every morning at eight to take my tablet for migraines",
            "User takes their tablet for migraines every morning.",
        ),
        (
            "can you remind me at ten to take my iron pill i take it every night",
            "User takes their iron pill every night.",
        ),
        ("remind me to take my atenolol every day", "User takes atenolol every day."),
    ],
)
def test_a_medicine_to_be_reminded_of_on_a_schedule_is_a_standing_limit(
    text: str, fact: str
) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert [(f.category, f.text) for f in facts] == [("constraint", fact)]


def test_a_one_off_reminder_is_no_medicine_taken() -> None:
    assert default_hybrid_extractor().extract("remind me to take my dog for a walk").facts == ()


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("my knees can't handle stairs anymore", "User's knees can't handle stairs."),
        ("my stomach can't take spicy food", "User's stomach can't take spicy food."),
        ("honestly my back can't do long flights", "User's back can't do long flights."),
    ],
)
def test_what_a_part_of_the_users_body_cannot_do_is_a_limit(text: str, fact: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert [(f.category, f.text) for f in facts] == [("constraint", fact)]


@pytest.mark.parametrize(
    "text", ["my sister's back can't take long drives", "my heart can't take this drama"]
)
def test_someone_elses_body_or_a_figure_of_speech_is_no_limit_of_the_users(text: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert not any(f.category == "constraint" and f.text.startswith("User's") for f in facts)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I react badly to penicillin.", "User reacts badly to penicillin."),
        ("i react really badly to shellfish", "User reacts really badly to shellfish."),
    ],
)
def test_a_bad_reaction_is_a_standing_limit(text: str, fact: str) -> None:
    facts = extract(text).facts
    assert [(f.category, f.text) for f in facts] == [("constraint", fact)]
