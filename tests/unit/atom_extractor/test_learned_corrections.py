"""The learned correction model: it is what training on the dev split gives, it hears
corrections the rules miss, keeps contrasts for what they are, and reads spans sensibly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memmesh.extraction.commands import detect_correction
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.commands import CUED_MARGIN, spells_out, without_misheard
from memmesh.extraction.learned.corrections import (
    MAX_SPAN_TOKENS,
    CorrectionModel,
    bare_value,
    span_text,
    spans_of,
    tokens_of,
)
from memmesh.extraction.learned.model_files import CORRECTION_MODEL_PATH
from memmesh.extraction.learned.train import CORRECTION_MARGIN, train_corrections
from memmesh.extraction.model import Command, Correction
from memmesh.extraction.text import normalize

DEV_SPLIT = Path(__file__).parents[3] / "fixtures" / "extraction" / "dev.jsonl"


def test_the_shipped_correction_model_is_what_training_on_the_dev_split_gives() -> None:
    trained = train_corrections([DEV_SPLIT])
    shipped = CorrectionModel.load(CORRECTION_MODEL_PATH)
    assert shipped.margin == pytest.approx(CORRECTION_MARGIN)
    assert np.allclose(trained.span_weights, shipped.span_weights, atol=1e-4)
    assert np.allclose(trained.pair_weights, shipped.pair_weights, atol=1e-4)


@pytest.mark.parametrize(
    ("utterance", "heard", "meant"),
    [
        ("the dentist is on Harley Street not Hartley Street", "Hartley", "Harley"),
        ("book it for the ninth, not the nineteenth", "nineteenth", "ninth"),
        # Two roles sit close in meaning, so no slip of the recogniser tells them apart; but
        # one person is not both, so the denied role is what was misheard.
        ("Priya's my sister-in-law, not my sister", "sister", "sister-in-law"),
        ("Lars? He's my brother-in-law. Not my brother.", "brother", "brother-in-law"),
        ("Nadia's my aunt, not my cousin", "cousin", "aunt"),
        ("Ines: godmother. Not aunt.", "aunt", "godmother"),
        ("it's my granddaughter who plays the cello, not my daughter", "daughter", "granddaughter"),
    ],
)
def test_the_hybrid_extractor_hears_corrections_the_rules_miss(
    utterance: str, heard: str, meant: str
) -> None:
    assert detect_correction(normalize(utterance))[0] is None
    result = default_hybrid_extractor().extract(utterance)
    assert result.command is Command.CORRECTION
    assert result.correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    ("utterance", "fact_word"),
    [("I'm vegan, not vegetarian", "vegan"), ("I'm Austrian, not German", "austrian")],
)
def test_a_contrast_the_words_do_not_call_a_correction_stays_a_fact(
    utterance: str, fact_word: str
) -> None:
    result = default_hybrid_extractor().extract(utterance)
    assert result.command is None and result.correction is None
    assert any(fact_word in fact.text.lower() for fact in result.facts), result.facts


@pytest.mark.parametrize(
    "utterance",
    [
        "Lucky you! Pets sure bring a lot of love and joy. Can't wait till Toby and I bond better.",
        "Thanks, Dave! Gotta stay safe on the trip. Can't wait to see you there! Goodbye!",
        # Two people, or two pets, set side by side: a contrast, not a role misheard.
        "I've got a dog, not a cat, cats make me sneeze",
        "my brother's the picky eater in the family, not me",
        "I'd rather go with my sister, not my mum, she gets tired",
    ],
)
def test_chat_and_contrasts_of_people_are_no_correction(utterance: str) -> None:
    result = default_hybrid_extractor().extract(utterance)
    assert result.command is None and result.correction is None


def test_a_pair_below_the_margin_is_taken_when_the_turn_says_a_word_was_taken_wrong() -> None:
    utterance = "you've put my job down as a plumber, I'm an electrician"
    extractor = default_hybrid_extractor()
    assert extractor.commands is not None and extractor.commands.corrections is not None
    found = extractor.commands.corrections.best_pair(normalize(utterance))
    assert found is not None
    pair, margin = found
    assert CUED_MARGIN <= margin < extractor.commands.corrections.margin
    assert detect_correction(normalize(utterance))[0] is None
    result = extractor.extract(utterance)
    assert (result.command, result.correction) == (
        Command.CORRECTION,
        Correction(heard="plumber", meant="electrician"),
    )


@pytest.mark.parametrize(
    ("utterance", "heard", "meant"),
    [
        # A denied word behind a title or "called"; two different numbers; a word spelled out
        # with spaces; the words "please correct that" and "quick fix", and "came out as" in a
        # turn whose "actually" the normaliser drops.
        ("my dentist is Dr Mensah, not Dr Menson", "Menson", "Mensah"),
        ("my dog isn't called Rover, he's called Rocco", "Rover", "Rocco"),
        ("it's 40 milligrams a day, not 14, please correct that.", "14", "40"),
        ("my boss is joanne not joan, j o a n n e", "joan", "joanne"),
        (
            "quick fix, my street came out as Elm Road but it's actually Elm Grove",
            "Elm Road",
            "Elm Grove",
        ),
    ],
)
def test_a_correction_said_plainly_in_other_words_is_heard(
    utterance: str, heard: str, meant: str
) -> None:
    result = default_hybrid_extractor().extract(utterance)
    assert (result.command, result.correction) == (Command.CORRECTION, Correction(heard, meant))


@pytest.mark.parametrize(
    "utterance",
    [
        "please correct my essay, it's not great",
        "I made a small fix to the code, not a big one",
        "I'd take the train, not the bus, it's quicker",
    ],
)
def test_asking_for_a_fix_or_drawing_a_contrast_is_no_correction(utterance: str) -> None:
    assert default_hybrid_extractor().extract(utterance).command is None


@pytest.mark.parametrize(
    ("text", "word", "spelled"),
    [
        ("ayesha not aisha a y e s h a", "ayesha", True),
        # The normaliser keeps one of a letter said twice.
        ("joanne not joan, j o a n e", "joanne", True),
        ("it's Tayla, T-A-Y-L-A", "Tayla", True),
        ("L. U. N. A. is her name", "luna", True),
        ("ayesha not aisha a y e s h a", "aisha", False),
        ("I got an A in maths", "a", False),
    ],
)
def test_a_word_spelled_out_is_found_only_for_its_own_letters(
    text: str, word: str, spelled: bool
) -> None:
    assert spells_out(text, word) is spelled


@pytest.mark.parametrize(
    "utterance",
    [
        "Congrats, you've put a lot of work into this!",
        "you've got tons of talent, keep going",
        "I already did what you said about the garden, it looks great",
    ],
)
def test_praise_and_advice_taken_are_no_correction(utterance: str) -> None:
    assert default_hybrid_extractor().extract(utterance).command is None


def test_a_turn_with_no_word_of_correcting_is_not_read_at_all() -> None:
    model = CorrectionModel.load(CORRECTION_MODEL_PATH)
    assert model.best_pair("I love hiking in the Alps with my sister Maria") is None


def test_the_same_turn_gives_the_same_pair_and_score() -> None:
    model = CorrectionModel.load(CORRECTION_MODEL_PATH)
    turn = "no I said Leeds, not Leicester"
    first, second = model.best_pair(turn), model.best_pair(turn)
    assert first is not None and first == second
    assert first[0] == Correction(heard="Leicester", meant="Leeds")


@pytest.mark.parametrize(
    ("turn", "heard", "kept"),
    [
        ("I take 75 micrograms every day, not 25", "25", "I take 75 micrograms every day"),
        ("it's a cockapoo not a cocker spaniel", "cocker spaniel", "it's a cockapoo"),
        ("Jemma? Gemma, she's my manager", "Jemma", "Jemma? Gemma, she's my manager"),
        # The same denials the model's pairs are accepted on: "my" and quotes too.
        ("Meera's my mother-in-law. Not my mum.", "mum", "Meera's my mother-in-law."),
        ("That's 'Nguyen', not 'Win'. Though", "Win", "That's 'Nguyen'. Though"),
    ],
)
def test_the_misheard_words_and_their_not_leave_the_turn(turn: str, heard: str, kept: str) -> None:
    assert without_misheard(turn, heard) == kept


@pytest.mark.parametrize(
    ("words", "value"),
    [
        ("Mrs. Adeyemi", "Adeyemi"),
        ("Dr Okafor", "Okafor"),
        ("Hannah's", "Hannah"),
        ("the green's", "the green"),
        # A title alone, a name that begins like one, "is" contracted: left as they are.
        ("Dr", "Dr"),
        ("Drew", "Drew"),
        ("it's", "it's"),
        ("O'Connor", "O'Connor"),
    ],
)
def test_a_title_before_and_a_possessive_after_are_no_part_of_the_value(
    words: str, value: str
) -> None:
    assert bare_value(words) == value


@given(st.text(alphabet="ab ,.;!?-'12", max_size=60))
def test_a_span_is_one_to_four_words_and_crosses_no_clause_break(text: str) -> None:
    tokens = tokens_of(text)
    for span in spans_of(text, tokens):
        assert 1 <= span.last - span.first <= MAX_SPAN_TOKENS
        inside = span_text(text, tokens, span)
        assert not any(mark in inside for mark in ",;!?")
