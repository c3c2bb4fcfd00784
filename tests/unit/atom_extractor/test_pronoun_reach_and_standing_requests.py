"""What a later clause says of a person just named, through a pronoun or with no subject; and
requests whose topic (a recurring slot, the form of every answer) makes them standing rules."""

import pytest

from memmesh.extraction.rules import extract


def facts_of(text: str, category: str) -> list[str]:
    return [f.text for f in extract(text).facts if f.category == category]


@pytest.mark.parametrize(
    "text, name, said",
    [
        # The user's own aside between the name and the pronoun keeps the person in view.
        ("my nephew Arlo came over and we baked bread, he is allergic to sesame", "Arlo", "sesame"),
        # A relative aside, then a clause with no subject goes on about the person named.
        ("my aunt Vera, who's eighty, has a bad heart condition", "Vera", "heart condition"),
        # A lasting condition outranks a habit said first.
        ("my father-in-law, Piet, lives with us, he's got mild dementia", "Piet", "dementia"),
        ("my brother Ola, he's been a welder his whole life", "Ola", "welder"),
    ],
)
def test_a_later_clause_describes_the_person_just_named(text: str, name: str, said: str) -> None:
    relationships = facts_of(text, "relationship")
    assert any(name in fact and said in fact for fact in relationships), relationships


@pytest.mark.parametrize(
    "text, name, not_said",
    [
        # Someone else comes up before the pronoun: it may be theirs.
        ("my son Bram, my wife says he is a genius", "Bram", "genius"),
        # "she" cannot be the user's dad.
        ("my dad Tomas, she is a nurse", "Tomas", "nurse"),
    ],
)
def test_a_pronoun_after_someone_else_is_not_attached(text: str, name: str, not_said: str) -> None:
    relationships = facts_of(text, "relationship")
    assert any(name in fact for fact in relationships), relationships
    assert not any(not_said in fact for fact in relationships), relationships


@pytest.mark.parametrize(
    "text, kept",
    [
        ("please don't book anything for me on Sundays", "Sundays"),
        ("don't schedule meetings during prayer times", "prayer times"),
        ("please use plain words with me", "plain words"),
        ("answer in Portuguese though", "Portuguese"),
        ("cite sources whenever you tell me a number", "tells them a number"),
    ],
)
def test_a_request_about_a_recurring_slot_or_every_answer_is_kept(text: str, kept: str) -> None:
    constraints = facts_of(text, "constraint")
    assert len(constraints) == 1, constraints
    assert kept in constraints[0]
    assert constraints[0].startswith("User wants the assistant to")
    assert not constraints[0].endswith("though.")


@pytest.mark.parametrize(
    "text",
    [
        # One task: its object is named, or is a thing to make now.
        "write this in Portuguese",
        "can you write a short note to my landlord",
        "reply in English to the landlord",
        # A one-off slot, not a recurring one.
        "please don't book anything for me tomorrow",
        # The form asked for is that of one answer about the topic named.
        "explain quantum computing in simple terms",
        "explain photosynthesis step by step",
    ],
)
def test_a_one_off_task_is_not_a_standing_rule(text: str) -> None:
    assert facts_of(text, "constraint") == []
