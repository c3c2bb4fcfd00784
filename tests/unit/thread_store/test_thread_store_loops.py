"""Active loops: commitments in user turns open, completions close by content words."""

from __future__ import annotations

import pytest

from memmesh.engines.thread_store.domain.loops import commitments, loop_changes, loop_order
from memmesh.engines.thread_store.domain.model import Loop, Role, Turn

T0 = 1_767_225_600_000_000


def user_turn(text: str, turn_id: str = "t1", role: Role = Role.USER) -> Turn:
    return Turn(turn_id, "s1", role, text, T0)


def opened(text: str) -> list[str]:
    return [loop.text for loop in loop_changes("t", "u", user_turn(text), [])[1]]


@pytest.mark.parametrize(
    ("said", "task"),
    [
        ("I need to book the dentist.", "Book the dentist"),
        ("I have to call my sister tonight", "Call my sister tonight"),
        ("I should renew my passport, it expires soon", "Renew my passport"),
        ("Remind me to water the plants", "Water the plants"),
        ("I'll send the invoice tomorrow!", "Send the invoice tomorrow"),
        ("Honestly I really need to finish the report but I'm tired", "Finish the report"),
    ],
)
def test_a_stated_commitment_opens_a_loop_with_short_task_text(said: str, task: str) -> None:
    assert opened(said) == [task]


def test_two_commitments_in_one_sentence_open_two_loops() -> None:
    assert opened("I need to book the dentist and I have to call Sarah.") == [
        "Book the dentist",
        "Call Sarah",
    ]


@pytest.mark.parametrize(
    "said",
    [
        "I'll be fine",
        "Should I book the dentist?",
        "I don't need to book anything",
        "I'll think about it",
        "I need to go",
    ],
)
def test_non_commitments_open_nothing(said: str) -> None:
    assert opened(said) == []


def test_assistant_turns_never_open_loops() -> None:
    closed, new = loop_changes(
        "t", "u", user_turn("I need to book the dentist", role=Role.ASSISTANT), []
    )
    assert (closed, new) == ([], [])


def dentist_loop() -> Loop:
    _, new = loop_changes("t", "u", user_turn("I need to book the dentist", "t0"), [])
    return new[0]


@pytest.mark.parametrize(
    "said",
    [
        "I booked the dentist.",
        "Done with the dentist, finally",
        "I already booked the dentist appointment",
        "I've booked the dentist",
    ],
)
def test_saying_it_is_done_closes_the_loop(said: str) -> None:
    loop = dentist_loop()
    closed, new = loop_changes("t", "u", user_turn(said, "t9"), [loop])
    assert [c.loop_id for c in closed] == [loop.loop_id]
    assert closed[0].closed_by_turn_id == "t9" and not closed[0].is_open
    assert new == []


@pytest.mark.parametrize(
    "said",
    [
        "I haven't booked the dentist yet",
        "Did you book the dentist?",
        "I need to book the dentist again",
        "I booked the hotel",
    ],
)
def test_negations_questions_restatements_and_other_topics_do_not_close(said: str) -> None:
    closed, _ = loop_changes("t", "u", user_turn(said, "t9"), [dentist_loop()])
    assert closed == []


def test_an_open_loop_is_not_opened_twice() -> None:
    _, new = loop_changes("t", "u", user_turn("I need to book the dentist", "t9"), [dentist_loop()])
    assert new == []


def test_loop_ids_are_deterministic_and_differ_per_user() -> None:
    first = loop_changes("t", "u", user_turn("I need to book the dentist"), [])[1][0]
    again = loop_changes("t", "u", user_turn("I need to book the dentist"), [])[1][0]
    other = loop_changes("t", "v", user_turn("I need to book the dentist"), [])[1][0]
    assert first.loop_id == again.loop_id != other.loop_id


def test_urgent_and_remind_me_commitments_are_more_salient_and_ordered_first() -> None:
    assert (
        commitments("I need to buy milk")[0][1] < commitments("Remind me to buy milk today")[0][1]
    )
    loops = [
        Loop("loop-b", "s", "B", ("b",), 1, T0, "t"),
        Loop("loop-a", "s", "A", ("a",), 1, T0, "t"),
        Loop("loop-c", "s", "C", ("c",), 3, T0 - 1, "t"),
        Loop("loop-d", "s", "D", ("d",), 1, T0 + 1, "t"),
    ]
    assert [loop.loop_id for loop in loop_order(loops)] == ["loop-c", "loop-d", "loop-a", "loop-b"]
