"""Rolling summaries and digests: extractive, bounded, deterministic, never a transcript dump."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.engines.thread_store.domain.loops import loop_changes
from memmesh.engines.thread_store.domain.model import DEFAULT_BOUNDS, Role, Turn
from memmesh.engines.thread_store.domain.summary import (
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
    build_digest,
    summarise,
)

T0 = 1_767_225_600_000_000


def turn(index: int, text: str, role: Role = Role.USER) -> Turn:
    return Turn(f"t{index:03d}", "s1", role, text, T0 + index * 1_000_000)


def long_session(count: int = 120) -> list[Turn]:
    turns = []
    for i in range(count):
        role = Role.USER if i % 2 == 0 else Role.ASSISTANT
        turns.append(
            turn(
                i,
                f"My friend Person{i} told me about project number {i} in great detail today.",
                role,
            )
        )
    return turns


def test_summary_is_bounded_however_long_the_session() -> None:
    summary = summarise(long_session())
    assert 0 < len(summary.text) <= SUMMARY_MAX_CHARS


def test_summary_keeps_the_newest_information() -> None:
    summary = summarise(long_session())
    assert "Person118" in summary.text
    assert "Person0 " not in summary.text


def test_summary_takes_only_user_turns_and_skips_small_talk() -> None:
    turns = [
        turn(0, "Hi! Thanks."),
        turn(1, "The assistant secretly likes Mondays a lot.", Role.ASSISTANT),
        turn(2, "My daughter Emma starts school in Lisbon next week."),
    ]
    summary = summarise(turns)
    assert summary.text == "My daughter Emma starts school in Lisbon next week."
    assert summary.evidence_turn_ids == ("t002",)


def test_summary_is_deterministic_whatever_the_input_order() -> None:
    turns = long_session(40)
    shuffled = turns[:]
    random.Random(7).shuffle(shuffled)
    assert summarise(turns) == summarise(shuffled)


def test_summary_tells_sentences_in_time_order() -> None:
    summary = summarise(
        [turn(0, "I adopted a cat named Miso."), turn(1, "Miso hates the vacuum cleaner.")]
    )
    assert summary.text == "I adopted a cat named Miso. Miso hates the vacuum cleaner."


def digest_session() -> list[Turn]:
    return [
        turn(0, "I need to book the dentist before Friday."),
        turn(1, "Which dentist do you usually go to?", Role.ASSISTANT),
        turn(2, "Dr Alvarez in Porto. Sarah recommended Dr Alvarez last year."),
        turn(3, "Should I ask Sarah about her insurance?"),
    ]


def test_digest_fields_are_filled_from_the_session() -> None:
    turns = digest_session()
    _, loops = loop_changes("t", "u", turns[0], [])
    digest = build_digest("s1", turns, loops)
    assert digest.thread_id == "s1"
    # Sarah is named in two turns; ties keep first-seen order.
    assert digest.title == "Sarah, Friday, Dr Alvarez"
    assert digest.key_entities == ("Sarah", "Friday", "Dr Alvarez", "Porto")
    assert digest.next_step == "Book the dentist before Friday"
    assert digest.unresolved_questions == ("Should I ask Sarah about her insurance?",)
    assert digest.unresolved
    assert set(digest.evidence_turn_ids) <= {t.turn_id for t in turns}
    assert "t000" in digest.evidence_turn_ids
    assert digest.update_us == turns[-1].time_us


def test_digest_is_bounded_and_never_a_transcript_dump() -> None:
    turns = long_session(400)
    digest = build_digest("s1", turns, [])
    assert len(digest.summary) <= SUMMARY_MAX_CHARS
    assert len(digest.title) <= TITLE_MAX_CHARS
    assert len(digest.key_entities) <= DEFAULT_BOUNDS.key_entities
    assert len(digest.unresolved_questions) <= DEFAULT_BOUNDS.unresolved
    assert len(digest.evidence_turn_ids) <= DEFAULT_BOUNDS.evidence
    transcript = " ".join(t.text for t in turns)
    assert len(digest.summary) < len(transcript) / 20


def test_digest_is_deterministic() -> None:
    turns = digest_session()
    assert build_digest("s1", turns, []) == build_digest("s1", list(reversed(turns)), [])


def test_an_answered_question_is_not_unresolved() -> None:
    turns = [turn(0, "Where did I park?"), turn(1, "Level 2, near the exit.", Role.ASSISTANT)]
    assert build_digest("s1", turns, []).unresolved_questions == ()


@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=400), max_size=40))
@settings(max_examples=60, deadline=None)
def test_any_session_gives_a_bounded_deterministic_summary_and_digest(texts: list[str]) -> None:
    turns = [turn(i, text, Role.USER if i % 3 else Role.ASSISTANT) for i, text in enumerate(texts)]
    summary = summarise(turns)
    assert len(summary.text) <= SUMMARY_MAX_CHARS
    assert summary == summarise(list(reversed(turns)))
    digest = build_digest("s1", turns, [])
    assert (
        len(digest.summary) <= SUMMARY_MAX_CHARS
        and len(digest.evidence_turn_ids) <= DEFAULT_BOUNDS.evidence
    )
    assert set(digest.evidence_turn_ids) <= {t.turn_id for t in turns}
