"""The shared text toolkit: tokens, stems, stop-word lists, sentences and entity node ids."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from memmesh.text import (
    CONVERSATION_STOP_WORDS,
    INDEX_STOP_WORDS,
    SLUG_STOP_WORDS,
    entity_node_id,
    fold,
    index_words,
    plural_stem,
    sentences,
    stem,
    words,
)


def test_sentences_split_after_end_marks_and_at_line_breaks() -> None:
    assert sentences("Hi there!  How are you? Fine; thanks.\nNew line") == [
        "Hi there!",
        "How are you?",
        "Fine;",
        "thanks.",
        "New line",
    ]
    assert sentences("  \n ") == []


def test_conversation_words_keep_inner_apostrophes_hyphens_and_numbers() -> None:
    assert words("I’m re-doing it at 12:30, costs 1,000.50!") == [
        "I'm",
        "re-doing",
        "it",
        "at",
        "12:30",
        "costs",
        "1,000.50",
    ]


def test_index_words_are_casefolded_unicode_runs_without_possessives() -> None:
    assert index_words("Sarah’s CAFÉ in São Paulo, snake_case") == [
        "sarah",
        "café",
        "in",
        "são",
        "paulo",
        "snake",
        "case",
    ]


def test_stem_is_snowball_english_on_the_word_as_given() -> None:
    assert [stem(w) for w in ("running", "parties", "happily", "generous")] == [
        "run",
        "parti",
        "happili",
        "generous",
    ]
    assert stem("Running") != stem("running")  # callers lower-case first


def test_stem_gives_the_same_answers_on_threads_stemming_at_once() -> None:
    roots, suffixes = ("connect", "general", "happy", "run"), ("", "s", "ing", "ed", "ness")
    vocabulary = [root + suffix for root in roots for suffix in suffixes]
    expected = [stem(w) for w in vocabulary]
    uncached = stem.__wrapped__  # the cache would hide a stemmer shared between threads
    results: list[list[str]] = []

    def work() -> None:
        results.append([uncached(w) for _ in range(50) for w in vocabulary][-len(vocabulary) :])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


def test_plural_stem_meets_plurals_and_possessives_and_keeps_the_prefix() -> None:
    assert {plural_stem(w) for w in ("sisters", "sister's", "sister", "'sister")} == {"sister"}
    assert plural_stem("parties") == plural_stem("party") == "party"
    assert plural_stem("boxes") == "box"
    assert [plural_stem(w) for w in ("glass", "bus", "this", "gas")] == [
        "glass",
        "bus",
        "this",
        "gas",
    ]


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz'", min_size=1, max_size=12))
def test_plural_stem_less_a_final_y_starts_the_word(word: str) -> None:
    stemmed = plural_stem(word)
    probe = stemmed[:-1] if stemmed.endswith("y") and len(stemmed) > 1 else stemmed
    assert word.lstrip("'").startswith(probe)


def test_fold_casefolds_and_makes_typographic_apostrophes_plain() -> None:
    assert fold("Sarah’s STRASSE") == "sarah's strasse"


def test_stop_word_lists_each_serve_their_purpose() -> None:
    # The index list is NLTK's: contraction fragments, no conversational fillers.
    assert {"don", "ll", "ve"} <= INDEX_STOP_WORDS and "hello" not in INDEX_STOP_WORDS
    # The conversation list drops greetings and fillers but keeps contractions whole.
    assert {
        "hello",
        "gonna",
        "don't",
        "i'm",
    } <= CONVERSATION_STOP_WORDS and "don" not in CONVERSATION_STOP_WORDS
    # Slug words never include what tells two keys apart.
    assert {"my", "the", "really"} <= SLUG_STOP_WORDS and "not" not in SLUG_STOP_WORDS


def test_entity_node_id_joins_lowercased_words_with_hyphens() -> None:
    assert entity_node_id("New  York") == "entity:new-york"
    assert entity_node_id("sarah") == "entity:sarah"
