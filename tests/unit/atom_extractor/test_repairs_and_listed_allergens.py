"""Words a speaker takes a word back with let the correction model's pair stand; allergens
listed after a comma are each a fact; interjections and particles are no one's name; a
learner's unsaid "it" and a transcript's lowercase "i'm" read as they are meant."""

import pytest

from memmesh.extraction import Command, Correction, extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.text import normalize


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        # The speaker's own slip, taken back with "wait, no" (a number before the same word
        # after "no wait" the rules hear themselves: test_said_back_and_self_corrections).
        ("My son Tobias, he's nine, wait, no, he turned ten in May.", "nine", "ten"),
        # What the assistant wrote or has down, then the word it should be.
        ("You wrote Marek in the note. It's Mirek.", "Marek", "Mirek"),
        ("you've got Kasia down as my aunt, she's my cousin", "aunt", "cousin"),
        ("It came out as Galway, I said Gdynia.", "Galway", "Gdynia"),
    ],
)
def test_a_repair_frame_lets_the_learned_pair_stand(text: str, heard: str, meant: str) -> None:
    # The rules hear no correction in these; the words of taking a word back are the sign.
    assert extract(text).correction is None
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.CORRECTION
    assert result.correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "text",
    [
        "you said it might rain and I said I'd take an umbrella",
        "I wrote a letter to my gran, she loves getting post",
        "my cousin said she's moving, but I told you that already",
    ],
)
def test_what_was_said_or_written_with_no_word_taken_back_is_no_correction(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is None


def test_each_allergen_listed_after_a_comma_is_a_fact_of_its_own() -> None:
    facts = default_hybrid_extractor().extract("Allergies: shellfish, sulfa drugs.").facts
    assert sorted(f.text for f in facts) == [
        "User is allergic to shellfish.",
        "User is allergic to sulfa drugs.",
    ]
    assert len({f.key for f in facts}) == 2


@pytest.mark.parametrize(
    "text, name",
    [
        ("Nadia? Oh, she's my sister-in-law.", "oh"),
        ("my neighbour's dog barks all night, which drives my mum up the wall.", "up"),
        ("I was just telling my neighbour how much I use you", "how"),
        ("my sister what a nightmare she is", "what"),
    ],
)
def test_an_interjection_or_a_particle_after_a_role_is_no_name(text: str, name: str) -> None:
    texts = [f.text.lower() for f in default_hybrid_extractor().extract(text).facts]
    assert not any(f"named {name}" in t or t.endswith(f" is {name}.") for t in texts)


def test_a_learners_unsaid_it_after_a_taste_says_why_and_is_no_second_fact() -> None:
    facts = (
        default_hybrid_extractor()
        .extract("I don't like the opera at all, for me is very boring music.")
        .facts
    )
    assert [f.text for f in facts] == ["User doesn't like the opera."]


@pytest.mark.parametrize(
    "said, normalized",
    [("i'm vegan", "I'm vegan"), ("i've got two kids", "I've got two kids")],
)
def test_a_transcripts_lowercase_contraction_is_the_users_own(said: str, normalized: str) -> None:
    assert normalize(said) == normalized
