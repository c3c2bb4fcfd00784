"""A correction's heard and meant words are values someone said: never a clause's frame ("it
doesn't mean you're"), a reply's opener ("Nope") or a connective alone ("and"). Chat between
friends is full of "not" and must not read as fixing what was heard."""

import pytest

from memmesh.extraction.commands import Command, is_a_value
from memmesh.extraction.learned import default_hybrid_extractor


@pytest.mark.parametrize(
    "text",
    [
        "Sorry to hear that, Joanna. Rejection stinks, but it doesn't mean you're not talented.",
        "Nope, not a new game. We put together a tournament for our favorite game.",
        "Nah, not in any online groups right now, but I do have my gaming group.",
        "It reminds me I'm not alone and have a great community around me.",
        "Still enjoying my soda and candy, although I know it's not the best habit to have.",
    ],
)
def test_chat_with_a_denial_is_no_correction(text: str) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is not Command.CORRECTION
    assert result.correction is None


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        ("You wrote 'there'. Should be 'their'.", "there", "their"),
        ("no, I said Kiran, not Karen", "Karen", "Kiran"),
    ],
)
def test_a_correction_of_values_still_stands(text: str, heard: str, meant: str) -> None:
    correction = default_hybrid_extractor().extract(text).correction
    assert correction is not None
    assert (correction.heard, correction.meant) == (heard, meant)


@pytest.mark.parametrize(
    "span, value",
    [
        ("Oxford", True),
        ("salt and pepper", True),
        ("their", True),
        ("and", False),
        ("not a", False),
        ("Nope", False),
        ("it doesn't mean you're", False),
        ("although I know it's", False),
        ("", False),
    ],
)
def test_what_counts_as_a_value(span: str, value: bool) -> None:
    assert is_a_value(span) is value


@pytest.mark.parametrize(
    "said, meant",
    # Made-up words the correction model once paired: an alias is no slip, whatever the words.
    [("wckvaubqtz", "ckvqnqcqsw"), ("azlvomybtl", "azscvqtdor"), ("bumathnzxq", "znulanrlqd")],
)
def test_what_a_word_stands_for_is_no_correction(said: str, meant: str) -> None:
    result = default_hybrid_extractor().extract(f"When I say {said}, I mean {meant}.")
    assert result.command is None
    assert result.correction is None
