"""Words that only introduce a statement, and idioms of taste (labelling rules 1 and 3)."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor


@pytest.mark.parametrize(
    "text, category, tokens",
    [
        (
            "The reason I'm asking about flats near the hospital is that I'm a junior doctor there",
            "identity",
            ["doctor"],
        ),
        ("the reason i ask is im a vegan", "constraint", ["vegan"]),
        ("but I should say I'm lactose intolerant", "constraint", ["lactose"]),
        ("I have to admit I love reality TV", "preference", ["reality"]),
        ("the thing is, I'm a night owl", "identity", ["night owl"]),
        ("the thing you should know is that I'm epileptic", "constraint", ["epilep"]),
        ("one thing about me that explains a lot is that I'm a huge planner", "identity", ["plan"]),
        ("fun fact, I'm a twin", "identity", ["twin"]),
        ("something you should know about me is I'm deaf in one ear", "constraint", ["deaf"]),
        ("mountains, give me mountains every time", "preference", ["mountain"]),
        ("give me jazz any day", "preference", ["jazz"]),
    ],
)
def test_the_statement_after_its_lead_in_is_kept(
    text: str, category: str, tokens: list[str]
) -> None:
    for result in (extract(text), default_hybrid_extractor().extract(text)):
        texts = [f.text.lower() for f in result.facts if f.category == category]
        assert any(all(t in fact for t in tokens) for fact in texts), result.facts


@pytest.mark.parametrize(
    "text",
    [
        # The words after the lead-in still say nothing lasting.
        "the truth is I'm thinking of quitting my job",
        "I should say I'm sorry to her",
        "what should I say to my boss",
        # An offer, not a taste.
        "give me a call any time",
    ],
)
def test_a_lead_in_makes_no_fact_of_what_is_not_one(text: str) -> None:
    assert extract(text).facts == ()
    assert default_hybrid_extractor().extract(text).facts == ()


@pytest.mark.parametrize(
    "text",
    [
        "Love my commute. Said no one.",
        "Wow, kale smoothies, my absolute favourite. Said no one ever.",
        "Oh yes, I am big fan of cold showers, especially when the boiler breaks in January",
        "Ah yes, I am such big fan of the rain, every day rain, wonderful",
        "Oh yes, I am very much loving when somebody is drilling the wall at seven in the morning.",
    ],
)
def test_praise_said_in_irony_is_no_taste(text: str) -> None:
    assert default_hybrid_extractor().extract(text).facts == ()


def test_a_sincere_aside_after_the_opener_is_kept() -> None:
    facts = default_hybrid_extractor().extract("oh yes, and I'm a big fan of jazz").facts
    assert [f.category for f in facts] == ["preference"]


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("recipe for 4, no pork. I'm halal.", ["halal"]),
        ("find me a stew recipe for tonight, no pork or wine in it, I keep halal", ["halal"]),
        ("Restaurants near the office, halal only. I eat halal.", ["halal"]),
        ("Kosher home. No shellfish, no mixing meat and dairy.", ["kosher"]),
    ],
)
def test_a_bare_exclusion_beside_a_diet_is_part_of_it(text: str, tokens: list[str]) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert len(facts) == 1, facts
    assert facts[0].category == "constraint"
    assert all(t in facts[0].text.lower() for t in tokens)


@pytest.mark.parametrize(
    "text",
    [
        # A second condition and a taste stay items of their own.
        "I'm vegan, I can't have gluten either",
        "Vegetarian. No mushrooms either, hate them.",
    ],
)
def test_a_diet_keeps_other_items_apart(text: str) -> None:
    assert len(default_hybrid_extractor().extract(text).facts) == 2


@pytest.mark.parametrize(
    "text, names",
    [
        ("Retired cop. Grandpa to Noor and Sami.", ["noor", "sami"]),
        ("two kids, Mila and Theo, plus a husband who snores like a tractor", ["mila", "theo"]),
        (
            "I have two cat, Pasha and Murka, they are sisters, very old, 15 year.",
            ["pasha", "murka"],
        ),
    ],
)
def test_two_people_named_together_are_two_facts(text: str, names: list[str]) -> None:
    people = [
        f.text.lower()
        for f in default_hybrid_extractor().extract(text).facts
        if f.category == "relationship"
    ]
    for name in names:
        assert [p for p in people if name in p] and not [
            p for p in people if all(n in p for n in names)
        ], people


def test_places_named_together_are_not_people() -> None:
    facts = default_hybrid_extractor().extract("my sister lives in Lagos and London").facts
    assert len([f for f in facts if f.category == "relationship"]) == 1, facts


@pytest.mark.parametrize(
    "text, found",
    [
        ("red wine out of a tablecloth? asking as a caterer, it happens every week", True),
        ("I'm asking as a parent", True),
        ("asking as a friend", False),
    ],
)
def test_asking_as_someone_says_what_the_user_is(text: str, found: bool) -> None:
    facts = extract(text).facts
    assert bool([f for f in facts if f.category == "identity"]) is found, facts


def test_a_turn_that_trails_off_on_a_connector_ends_before_it() -> None:
    facts = default_hybrid_extractor().extract("oh and im gluten intolerant so").facts
    assert [f.text for f in facts] == ["User is gluten intolerant."]
