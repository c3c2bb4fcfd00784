"""A misheard word is corrected without "I said": two words that sound alike but mean
different things ("dietitian"/"diabetic") are a slip of the recogniser; a contrast drawn with
"not" ("vegan"/"vegetarian") is a statement."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.commands import detect_correction
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.model import Command, Correction


@pytest.mark.parametrize(
    "utterance, heard, meant",
    [
        ("I'm a dietitian, not diabetic.", "diabetic", "dietitian"),
        ("you understand wrong. I am vegetarian, not veterinarian.", "veterinarian", "vegetarian"),
        ("I drink oat milk. Not goat.", "goat", "oat"),
        ("Mark with a k. Not Marc. Business partner.", "Marc", "Mark"),
        ("I said I'm Buddhist. Not Baptist.", "Baptist", "Buddhist"),
    ],
)
def test_a_sound_alike_word_of_another_meaning_is_a_correction(utterance, heard, meant):
    result = default_hybrid_extractor().extract(utterance)
    assert result.command is Command.CORRECTION
    assert result.correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "utterance",
    [
        "I'm vegan, not vegetarian",
        "I'm a nurse, not a doctor",
        "I'm into jazz, not rock",
        "I love my job. Not the commute though.",
        "I said I love my job. Not the commute.",
        # A light verb sounds like anything: "use" is no slip for "cups".
        "and if you give me a recipe use grams not cups, I'm a baker",
        "I've been using it for years and I'm not moving",
    ],
)
def test_a_contrast_drawn_with_not_is_no_correction(utterance):
    result = default_hybrid_extractor().extract(utterance)
    assert result.correction is None
    assert result.command is None


def test_without_a_meaning_test_the_rules_want_a_sign_in_the_words():
    assert extract("I'm a dietitian, not diabetic.").correction is None
    correction, _ = detect_correction("I'm a dietitian, not diabetic.", lambda a, b: True)
    assert correction == Correction(heard="diabetic", meant="dietitian")
    # The meaning test is asked only of words that sound alike.
    correction, _ = detect_correction("I'm a nurse, not a doctor", lambda a, b: True)
    assert correction is None


@pytest.mark.parametrize(
    "utterance, facts",
    [
        ("Cairns, not Cannes.", []),
        ("no, I said Freya, not Frida. my daughter's name is Freya", ["freya"]),
        ("Is not Lyon, is Lille. I am living in Lille since three years", ["lille"]),
    ],
)
def test_a_correction_repeating_its_word_states_no_fact_of_it(utterance, facts):
    # The meant word said again is the correction itself, not news about the user.
    result = default_hybrid_extractor().extract(utterance)
    assert result.correction is not None
    assert [f.text.lower() for f in result.facts if any(w in f.text.lower() for w in facts)] == [
        f.text.lower() for f in result.facts
    ]
    assert len(result.facts) == len(facts)


@pytest.mark.parametrize(
    "utterance, heard, meant",
    [
        ("I said yoga, I love yoga, and it came out as yogurt on the screen", "yogurt", "yoga"),
        ("I'm pretty sure I said oat milk, and you put goat milk, which, no", "goat", "oat"),
        (
            "I asked you to set a timer for the pasta and you came back with something about a pastor",
            "pastor",
            "pasta",
        ),
    ],
)
def test_what_the_words_came_out_as_is_the_misheard_word(utterance, heard, meant):
    result = default_hybrid_extractor().extract(utterance)
    assert result.correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "utterance",
    [
        "can you put something together for the camping trip",
        "my cake came out as a disaster",
        "you put the milk in the fridge yesterday",
    ],
)
def test_what_came_out_of_something_else_is_no_mishearing(utterance):
    assert default_hybrid_extractor().extract(utterance).correction is None


@pytest.mark.parametrize(
    "utterance, heard, meant",
    [
        # A dash ends the clause; the words after it are not part of the misheard span.
        ("No, Tomas, not Thomas — Tomas is my cousin.", "Thomas", "Tomas"),
        # The preposition came with the heard word, not with the meant one.
        ("I said I'm from Leeds, not from Leeks!", "Leeks", "Leeds"),
        # Of a longer "not ..." span, the words that sound like the meant one.
        ("Not the price of Malta, I said Mallorca, for the holiday", "Malta", "Mallorca"),
        # "Not what I said" is the sign, not the pair.
        ("no, that's not what I said, I asked for flights to Bern, not Berlin", "Berlin", "Bern"),
    ],
)
def test_the_misheard_span_is_the_word_that_sounds_like_the_meant_one(utterance, heard, meant):
    assert default_hybrid_extractor().extract(utterance).correction == Correction(heard, meant)


@pytest.mark.parametrize(
    "utterance",
    [
        "Please not to talk anymore about my job when you answer me.",
        "I was thinking of moving but it's not happening",
    ],
)
def test_a_denied_action_is_no_misheard_word(utterance):
    assert default_hybrid_extractor().extract(utterance).correction is None


@pytest.mark.parametrize(
    "utterance, fact_words",
    [
        ("I said I'm a pilot, not a pirate!", ("pilot",)),
        ("no, I said I'm Jewish. Not Jedi.", ("jewish",)),
        ("I meant I live in Austin, not Boston", ("lives", "austin")),
    ],
)
def test_what_the_user_restates_in_a_correction_is_kept(utterance, fact_words):
    # "I said I'm a pilot": the user says again what holds, beside the misheard word.
    result = default_hybrid_extractor().extract(utterance)
    assert result.command is Command.CORRECTION
    assert [f for f in result.facts if all(w in f.text.lower() for w in fact_words)]
    assert not [f for f in result.facts if result.correction.heard.lower() in f.text.lower()]
