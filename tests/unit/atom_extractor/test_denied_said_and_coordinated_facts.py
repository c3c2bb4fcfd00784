"""Corrections that deny what was heard and restate it ("I didn't say X, I said Y", "it's not
a X I …, it's a Y", "Dr. Y, not Dr. Z"), and facts said as a coordination ("A and also B",
"A, B too") kept one fact per item; look-alikes stay statements."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.commands import detect_correction
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.model import Command, Correction


@pytest.mark.parametrize(
    "utterance, heard, meant",
    [
        # A statement denied, then the same statement with one word changed.
        (
            "No, I didn't say order the cake from Lidl, I said order the cake from Liddell's.",
            "Lidl",
            "Liddell's",
        ),
        (
            "hold on, I never said I'm a plumber, I said I'm a plasterer, big difference.",
            "plumber",
            "plasterer",
        ),
        # A statement of another verb denied: its last word is the one misheard.
        ("No no, I don't work in Bath, I said Barth, up north.", "Bath", "Barth"),
        # The misheard span ends where the next clause starts.
        ("you got it wrong, it's not a bank I work at, it's a bakery", "bank", "bakery"),
        # Two names of one person that sound alike, titles shared.
        ("my physio is Dr. Lund, not Dr. Land", "Land", "Lund"),
        ("you understood Mila but is Milla, with two Ls", "Mila", "Milla"),
        # The thing a preposition names is what was contrasted.
        ("Correction: allergic to sulfa, not salsa.", "salsa", "sulfa"),
        ("hmm, no, Tours in France, not Belgium", "Belgium", "France"),
        ("Not Friday, Monday I said.", "Friday", "Monday"),
    ],
)
def test_a_denied_or_restated_word_is_a_correction(utterance, heard, meant):
    correction, _ = detect_correction(utterance)
    assert correction == Correction(heard=heard, meant=meant)


def test_what_the_denial_corrects_holds_as_a_fact():
    result = extract("No, I don't live in Derby, I said Darby, in Pennsylvania.")
    assert result.command is Command.CORRECTION
    assert result.correction == Correction(heard="Derby", meant="Darby")
    assert [f.text for f in result.facts] == ["User lives in Darby (in Pennsylvania)."]


@pytest.mark.parametrize(
    "utterance",
    [
        # A plain contrast, a second statement, an exclamation: nothing misheard.
        "I don't drive, I said I take the bus",
        "I don't eat pork, I said that before",
        "oh no, I lost my phone, not again",
        "ugh, no, the train is late, not again",
        "I support Leeds, not Chelsea",
        "it's not a gym I go to, it's a pool",
        "I saw Dr. Smith today. Not great news.",
        # Days and months said against each other plainly are a choice.
        "book it for Monday, not Sunday",
        "move the trip to June, not July",
    ],
)
def test_look_alikes_are_no_correction(utterance):
    assert detect_correction(utterance)[0] is None


def test_coordinated_conditions_are_one_fact_each():
    facts = extract("I have the arthritis and also the high blood pressure").facts
    assert [f.text for f in facts] == [
        "User has the arthritis.",
        "User has the high blood pressure.",
    ]
    assert all(f.category == "constraint" for f in facts)
    facts = extract("I have asthma and a bad shoulder").facts
    assert [f.text for f in facts] == ["User has asthma.", "User has a bad shoulder."]


def test_a_coordination_with_something_else_stays_one_fact():
    # Only when every part names a condition is it split.
    facts = extract("I have epilepsy and two dogs").facts
    assert len(facts) == 1
    assert facts[0].text.startswith("User has epilepsy")


def test_a_fragment_adding_an_item_with_too_is_a_fact_of_its_own():
    facts = default_hybrid_extractor().extract("Vegan, gluten intolerant too.").facts
    texts = [f.text.lower() for f in facts]
    assert any("vegan" in t and "gluten" not in t for t in texts)
    assert any("gluten" in t and "vegan" not in t for t in texts)


@pytest.mark.parametrize(
    ("turn", "second"),
    [("I'm vegan, gluten intolerant too.", "gluten"), ("I have asthma, eczema as well", "eczema")],
)
def test_a_second_item_is_read_with_the_lead_of_the_clause_before(turn, second):
    # The head reads "gluten intolerant too" as "I'm gluten intolerant too", as a listener
    # hears it; alone the fragment sat at the acceptance bar.
    texts = [f.text.lower() for f in default_hybrid_extractor().extract(turn).facts]
    assert len(texts) == 2
    assert any(second in t and " too" not in t and "as well" not in t for t in texts), texts


@pytest.mark.parametrize(
    ("text", "allergen"),
    [
        ("I have two cats, Luna and Sol, and I am allergic to the dogs, funny no?", "the dogs"),
        ("I'm allergic to kiwi, properly allergic, throat closes up, so keep that in mind", "kiwi"),
        (
            "no no, I said I'm allergic to cashews, you wrote cashmere, I don't think you can be allergic to a jumper",
            "cashews",
        ),
    ],
)
def test_a_remark_after_an_allergy_is_no_allergen(text: str, allergen: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    allergies = [f.text for f in facts if "allergic" in f.text]
    assert allergies == [f"User is allergic to {allergen}."], facts
    assert not any("think" in f.text for f in facts), facts
