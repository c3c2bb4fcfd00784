"""Redaction of archived turn text: sentence by sentence, case- and whitespace-insensitive."""

from __future__ import annotations

from memmesh.engines.thread_store.domain.redaction import holds_any, redact


def test_only_the_sentences_holding_a_term_are_removed() -> None:
    text = "Hello there. My sister lives in Porto! I love hiking."
    assert redact(text, ["porto"]).text == "Hello there. I love hiking."
    assert redact(text, ["porto"]).changed


def test_terms_match_across_case_and_whitespace_as_whole_words() -> None:
    text = "My  Sister\tlives in PORTO. We met in Portobello."
    assert redact(text, ["my sister lives in porto"]).text == "We met in Portobello."
    # "Porto" is not "Portobello": a term matches whole words only.
    assert redact("We met in Portobello.", ["Porto"]).changed is False


def test_a_term_running_over_a_sentence_end_removes_every_sentence_it_touches() -> None:
    text = "Keep this. It is in Porto. Sister said so. Keep that."
    assert redact(text, ["porto. sister"]).text == "Keep this. Keep that."


def test_no_terms_or_nothing_left_empties_the_turn() -> None:
    assert redact("Anything at all.", []).text == ""
    assert redact("Anything at all.", ["  ", ""]).text == ""
    assert redact("Only Porto here.", ["porto"]) == redact("Only Porto here.", ["PORTO"])
    assert redact("Only Porto here.", ["porto"]).text == ""


def test_a_repeat_changes_nothing() -> None:
    once = redact("Hello. Porto is far.", ["porto"])
    assert redact(once.text, ["porto"]).changed is False
    assert redact("", []).changed is False
    assert holds_any("the PORTO trip", ["porto"]) and not holds_any("the trip", ["porto"])
