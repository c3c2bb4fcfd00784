"""Shapes of correction beyond "not X, Y": what the assistant said beside the user's own
statement in the same frame, "when I said X I meant Y", and "you keep mixing them up" as a
sign; each gives its pair and keeps the statement with the meant word."""

import pytest

from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.model import Correction


@pytest.mark.parametrize(
    "utterance, heard, meant, fact_word",
    [
        (
            "you said I'm a pediatrician, I'm a podiatrist, feet not kids lol",
            "pediatrician",
            "podiatrist",
            "podiatrist",
        ),
        (
            "hold on, when I said I'm allergic to almonds I meant walnuts",
            "almonds",
            "walnuts",
            "walnuts",
        ),
        (
            "i live in uh worcester not gloucester you keep mixing them up",
            "gloucester",
            "worcester",
            "worcester",
        ),
    ],
)
def test_new_correction_shapes_give_their_pair_and_keep_the_statement(
    utterance, heard, meant, fact_word
):
    result = default_hybrid_extractor().extract(utterance)
    assert result.correction == Correction(heard=heard, meant=meant)
    assert any(fact_word in fact.text for fact in result.facts)
    assert all(heard not in fact.text for fact in result.facts)


@pytest.mark.parametrize(
    "utterance",
    [
        # The user's own slip, not the assistant's.
        "my kids love pizza not pasta and I keep mixing them up when I cook",
        # What the assistant said, answered with something else than the same statement.
        "you said it would rain, but I'm fine",
        "you think I'm lazy, I'm just tired",
    ],
)
def test_look_alikes_of_the_new_shapes_are_no_correction(utterance):
    result = default_hybrid_extractor().extract(utterance)
    assert result.correction is None
    assert result.command is None


@pytest.mark.parametrize("meant", ["Isabel", "Itsuki", "Isvzqywtp"])
def test_a_meant_name_keeps_letters_that_spell_a_lead_in_word(meant):
    # "is" and "its" lead a meant word in ("no, it's Isla"), never open one.
    result = default_hybrid_extractor().extract(f"No, I said {meant}, not Jhmophzrd.")
    assert result.correction == Correction(heard="Jhmophzrd", meant=meant)
