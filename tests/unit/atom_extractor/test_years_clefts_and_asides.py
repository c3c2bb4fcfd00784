"""A span of years said as a note before a state, clefts that put the thing first, judgements
of a thing named elsewhere, spelling asides in a correction, and praise taken back by a bare
"not"; each beside look-alikes that must stay untouched."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.terse import spell_out_notes


@pytest.mark.parametrize(
    "text, spelled",
    [
        ("uh fifteen years vegan and counting", "I've been vegan for fifteen years"),
        ("new flat, but six years teetotal now.", "I've been teetotal for six years"),
    ],
)
def test_years_before_a_state_are_said_as_the_state_that_lasted(text: str, spelled: str) -> None:
    assert spelled in spell_out_notes(text)


@pytest.mark.parametrize(
    "text",
    [
        "two years ago I quit",
        "my son is nine years old",
        "ten years later we met again",
        "lots of years vegan",
    ],
)
def test_other_spans_of_years_stay_as_said(text: str) -> None:
    assert spell_out_notes(text) == text


def test_a_span_of_years_before_a_diet_gives_the_diet() -> None:
    facts = extract("honestly eight years vegetarian now").facts
    assert any("vegetarian" in fact.text and fact.category == "constraint" for fact in facts)


@pytest.mark.parametrize(
    "text, word",
    [
        ("it's sesame I'm allergic to", "sesame"),
        ("it's olives that I can't stand", "olives"),
    ],
)
def test_a_cleft_is_read_as_the_plain_statement(text: str, word: str) -> None:
    assert any(word in fact.text for fact in extract(text).facts)


def test_a_cleft_in_a_correction_keeps_the_meant_thing() -> None:
    result = extract("no, it's pecans I'm allergic to, not pickles")
    assert result.correction is not None and result.correction.meant == "pecans"
    assert any("pecans" in fact.text for fact in result.facts)


def test_it_is_without_a_cleft_predicate_is_untouched() -> None:
    assert spell_out_notes("it's late I'm tired") == "it's late I'm tired"


@pytest.mark.parametrize(
    "text, kept",
    [
        ("Jazz, for me is a big no, I never watch them", "Jazz"),
        ("Tripe is never for me, I find it revolting", "Tripe"),
    ],
)
def test_a_judgement_of_what_was_named_before_is_no_fact_of_its_own(text: str, kept: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert any(kept in fact.text for fact in facts)
    assert all("watches them" not in fact.text and "finds it" not in fact.text for fact in facts)


def test_a_judgement_that_names_its_thing_stays() -> None:
    assert any("cilantro" in fact.text for fact in extract("I find cilantro disgusting").facts)


@pytest.mark.parametrize(
    "text, meant, aside",
    [
        ("it's Siân, not Sean, the Welsh spelling", "Siân", "spelling"),
        ("my dog's name is spelled, Rolo, not Rollo like you wrote it", "Rolo", "wrote"),
    ],
)
def test_a_spelling_aside_in_a_correction_is_no_fact(text: str, meant: str, aside: str) -> None:
    result = extract(text)
    assert result.correction is not None
    assert all(aside not in fact.text for fact in result.facts)


@pytest.mark.parametrize(
    "text",
    [
        "i really love monday mornings the best thing ever not",
        "oh sure, I'm a morning person lol",
    ],
)
def test_praise_taken_back_or_laughed_off_is_no_fact(text: str) -> None:
    assert extract(text).facts == ()


@pytest.mark.parametrize(
    "text",
    [
        "I love jazz, whether you like it or not",
        "oh yeah, and I love jazz",
    ],
)
def test_sincere_look_alikes_of_irony_keep_their_fact(text: str) -> None:
    assert any("jazz" in fact.text for fact in extract(text).facts)


@pytest.mark.parametrize(
    "text, fact_words",
    [
        ("we never buy bread because my husband's coeliac", ("husband", "coeliac")),
        ("no nuts in the house, my son's allergic to them", ("son", "allergic")),
    ],
)
def test_the_is_of_someones_lasting_condition_is_heard(
    text: str, fact_words: tuple[str, ...]
) -> None:
    assert f"my {fact_words[0]} is {fact_words[1]}" in spell_out_notes(text)


@pytest.mark.parametrize(
    "text",
    [
        "my daughter's vegan friends came over",
        "my brother's diabetic cat is fine",
        "I love my mum's cooking",
    ],
)
def test_a_possessive_before_a_noun_stays_a_possessive(text: str) -> None:
    assert spell_out_notes(text) == text


def test_a_things_pronoun_after_a_taste_says_why_and_no_second_fact() -> None:
    facts = (
        default_hybrid_extractor()
        .extract("I can't stand opera at all, for me it is just noise")
        .facts
    )
    assert any("opera" in fact.text for fact in facts)
    assert all("noise" not in fact.text for fact in facts)


@pytest.mark.parametrize(
    "text, token",
    [
        ("I am left-handed, maybe it matters.", "left-handed"),
        ("I'm vegetarian, in case it's useful.", "vegetarian"),
        ("my wife's name is Nadia, not sure if you had that", "nadia"),
    ],
)
def test_a_word_on_whether_it_is_news_does_not_hedge_the_fact(text: str, token: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert any(token in fact.text.lower() for fact in facts)
    assert not any("maybe" in fact.text.lower() for fact in facts)


@pytest.mark.parametrize("text", ["I like jazz, maybe.", "maybe I'm a morning person"])
def test_a_hedge_on_the_fact_itself_still_holds_it_back(text: str) -> None:
    assert default_hybrid_extractor().extract(text).facts == ()


def test_you_must_know_introduces_a_fact_as_fyi_does() -> None:
    facts = default_hybrid_extractor().extract("Also you must know I am living in Lyon now.").facts
    assert [fact.category for fact in facts] == ["identity"]
    assert "lyon" in facts[0].text.lower()
