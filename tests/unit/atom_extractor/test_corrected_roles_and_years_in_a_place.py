"""A correction that puts a person's role right states whom it is about; years spent in a
named place, a move "up to" a place and children named with their ages are facts."""

import pytest

from memmesh.extraction import Command
from memmesh.extraction.learned import default_hybrid_extractor


def _facts(text: str) -> list[tuple[str, str]]:
    return [(f.category, f.text) for f in default_hybrid_extractor().extract(text).facts]


@pytest.mark.parametrize(
    ("text", "role", "name"),
    [
        ("Cousin, not nephew. Dariusz.", "cousin", "Dariusz"),
        ("Olga: aunt. Not mother.", "aunt", "Olga"),
        ("Is not my brother, is my brother-in-law. His name Tomasz.", "brother-in-law", "Tomasz"),
        ("He is my uncle, not my father, Rashid is uncle.", "uncle", "Rashid"),
    ],
)
def test_a_role_put_right_is_said_of_the_one_person_named(text: str, role: str, name: str) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.CORRECTION
    relationships = [f.text for f in result.facts if f.category == "relationship"]
    assert len(relationships) == 1
    assert role in relationships[0].lower() and name in relationships[0]


def test_a_role_put_right_with_two_people_named_states_nothing_of_either() -> None:
    # Whose role it is cannot be told: neither is said to be the cousin.
    result = default_hybrid_extractor().extract("Cousin, not nephew. Dariusz and Marek.")
    assert result.command is Command.CORRECTION
    assert not [f for f in result.facts if "cousin" in f.text.lower()]


def test_the_thing_put_right_with_the_is_the_users() -> None:
    facts = _facts("no the dog is biscuit not brisket")
    assert ("relationship", "User's dog is biscuit.") in facts


def test_a_day_put_right_names_no_one() -> None:
    # "the dentist is Thursday": when, not who.
    assert _facts("no wait, not Monday, Friday, the barber is Friday") == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "originally from Accra, been in Leeds twelve years now",
            "User has been in Leeds for twelve years.",
        ),
        ("I've been in Halifax for about six years", "User has been in Halifax for six years."),
    ],
)
def test_years_in_a_named_place_are_where_the_user_lives(text: str, fact: str) -> None:
    assert ("identity", fact) in _facts(text)


def test_time_in_hospital_is_no_home() -> None:
    assert _facts("been in hospital for two years") == []


def test_a_move_up_to_a_place_is_where_the_user_lives() -> None:
    assert ("identity", "User lives in Inverness.") in _facts(
        "I moved up to Inverness about four years ago for work"
    )


def test_children_named_with_their_ages_are_each_a_fact() -> None:
    facts = _facts("I've got two kids, Noor's eleven and Sami's seven, and I work nights")
    relationships = sorted(t for c, t in facts if c == "relationship")
    assert relationships == ["User has a kid named Noor.", "User has a kid named Sami."]


@pytest.mark.parametrize(
    ("text", "heard", "meant"),
    [
        # The preposition came with the words said first, not with the ones meant.
        ("Raised in Kraków. Or rather, Gdańsk.", "Kraków", "Gdańsk"),
        # A quote mark the span cut through, an article before the meant words.
        ("Ugh, it came out as 'buy more plums' — I meant prunes.", "plums", "prunes"),
        # A day taken back for a day, whatever was said after it.
        ("Tuesday at 3. Scratch that, Friday.", "Tuesday", "Friday"),
    ],
)
def test_a_pair_leaves_out_the_words_it_was_said_with(text: str, heard: str, meant: str) -> None:
    correction = default_hybrid_extractor().extract(text).correction
    assert correction is not None
    assert (correction.heard, correction.meant) == (heard, meant)
