"""The command patterns are screened by the words they require: the screen may only skip a
pattern that cannot match, so every answer is the one of trying all patterns."""

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.extraction import commands
from memmesh.extraction.anchors import WordScreen, required_words
from memmesh.extraction.polite import plain_request
from memmesh.extraction.text import normalize, split_clauses

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "extraction"


def unscreened_is_command_clause(text: str) -> bool:
    # The patterns read a polite request as the plain one it wraps.
    plain = plain_request(text)
    return any(pattern.search(plain) for _, pattern in commands._COMPILED)


def first_unscreened_match(text: str) -> tuple[object, int] | None:
    for command, pattern in commands._COMPILED:
        if match := pattern.search(text):
            return command, match.start()
    return None


def first_screened_match(text: str) -> tuple[object, int] | None:
    for command, pattern in commands._candidates(text):
        if match := pattern.search(text):
            return command, match.start()
    return None


def test_a_pattern_requires_its_literals_and_one_word_of_each_alternation() -> None:
    pattern = re.compile(r"\b(?:please\s+)?(?:forget|erase|wipe)\s+(?:it|that)\b", re.I)
    assert set(required_words(pattern)) == {
        frozenset({"forget", "erase", "wipe"}),
        frozenset({"it", "that"}),
    }


def test_what_may_be_left_out_is_not_required() -> None:
    optional = re.compile(r"(?:my\s+)?data|records?|x*forget", re.I)
    # One alternative needs "data", one "record", one "forget": one of them, nothing else.
    assert required_words(optional) == (frozenset({"data", "record", "forget"}),)
    assert required_words(re.compile(r"\w+\s+(?:a|)", re.I)) == ()


def test_the_screen_skips_only_patterns_whose_words_are_missing() -> None:
    patterns = [re.compile(p, re.I) for p in (r"\bforget\s+it\b", r"\bdelete\b", r"\w+")]
    screen = WordScreen([required_words(p) for p in patterns])
    assert screen.passing("please forget it") == [True, False, True]
    assert screen.passing("delete that") == [False, True, True]
    # "it" is there but "forget" is not: the first pattern cannot match.
    assert screen.passing("it is fine") == [False, False, True]


def test_every_labelled_clause_gets_the_unscreened_answer() -> None:
    lines = (FIXTURES / "dev.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in lines if line.strip()]
    assert len(texts) > 500
    clauses = [clause.text for text in texts for clause in split_clauses(normalize(text))]
    commanding = 0
    for clause in clauses:
        expected = unscreened_is_command_clause(clause)
        assert commands.is_command_clause(clause) is expected, clause
        assert first_screened_match(clause) == first_unscreened_match(clause), clause
        commanding += expected
    assert commanding > 50


_COMMAND_WORDS = [
    "forget",
    "delete",
    "don't",
    "remember",
    "stop",
    "mention",
    "that",
    "my",
    "please",
    "about",
    "everything",
    "never",
    "record",
    "off",
    "save",
    "it",
    "Forget",
    "ERASE",
    "ſtop",
    "wipe",
    "all",
    "of",
    "me",
    "I",
    ",",
    ".",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_COMMAND_WORDS) | st.text(max_size=6), max_size=12))
def test_any_text_gets_the_unscreened_answer(words: list[str]) -> None:
    text = " ".join(words)
    assert commands.is_command_clause(text) is unscreened_is_command_clause(text)
    assert first_screened_match(text) == first_unscreened_match(text)
