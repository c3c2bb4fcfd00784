"""A pet named in one clause and said to be an animal in the next is a relationship fact; a
relative called by a kin title and a name ("Grandpa Ezra") is the user's own."""

import pytest

from memmesh.extraction.learned import default_hybrid_extractor


def _relationships(text: str) -> list[str]:
    result = default_hybrid_extractor().extract(text)
    return [f.text for f in result.facts if f.category == "relationship"]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("took Mochi to the groomer, she's a shih tzu", "User has a shih tzu named Mochi."),
        ("Fed Basil. Tortoise. Forty years old.", "User has a tortoise named Basil."),
        ("at the park with Bruno, our labrador, all morning", "User has a labrador named Bruno."),
        ("we walked biscuit this morning hes our whippet", "User has a whippet named Biscuit."),
    ],
)
def test_a_pet_said_to_be_an_animal_after_its_name(text: str, fact: str) -> None:
    assert _relationships(text) == [fact]


def test_a_pet_named_with_its_kind_already_is_one_fact() -> None:
    facts = _relationships("my cat Olive, a ragdoll, sleeps all day")
    assert len(facts) == 1 and facts[0].startswith("User has a cat named Olive")


def test_a_person_said_to_like_animals_is_no_pet() -> None:
    assert _relationships("Went to the park with Tom. He's a dog person.") == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Ring Grandma Odile tonight please.", "User has a grandma named Odile."),
        ("Remind me to email Uncle Femi about Sunday.", "User has an uncle named Femi."),
    ],
)
def test_a_relative_called_by_a_kin_title_is_the_users(text: str, fact: str) -> None:
    assert _relationships(text) == [fact]


def test_someone_elses_titled_relative_is_not_the_users() -> None:
    assert _relationships("my friend's Uncle Bob is visiting them") == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "My landlord, Mr. Haddad, he is living downstairs from me",
            "User's landlord is Mr. Haddad.",
        ),
        (
            "I have one sister, Ines, she is living in Lyon with her family",
            "User has a sister named Ines.",
        ),
    ],
)
def test_what_a_named_persons_pronoun_says_is_no_second_fact(text: str, fact: str) -> None:
    # The rule's fact names the person; the clause after the name is said of them.
    assert _relationships(text) == [fact]


def test_a_neighbour_called_by_where_they_live() -> None:
    assert _relationships("Ingrid next door waters my plants when I travel.") == [
        "User has a neighbour named Ingrid (next door)."
    ]
