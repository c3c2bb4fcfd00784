"""Seed 003's session rule as the client tracks it: a new session on the first turn and
after a gap over 30 minutes, the same session otherwise."""

from __future__ import annotations

from itertools import count

from memmesh.client.budget import BudgetSpent, TurnBudget
from memmesh.client.session import SESSION_GAP_US, SessionTracker

MINUTE_US = 60_000_000


def tracker() -> SessionTracker:
    numbers = count(1)
    return SessionTracker(new_session_id=lambda: f"s{next(numbers)}")


def test_first_turn_starts_a_session_and_the_next_continues_it() -> None:
    sessions = tracker()
    first = sessions.user_turn(0)
    assert (first.session_id, first.mode, first.ended_session_id) == ("s1", "session_start", "")
    second = sessions.user_turn(MINUTE_US)
    assert (second.session_id, second.mode) == ("s1", "in_session")


def test_a_gap_over_thirty_minutes_starts_a_new_session_and_ends_the_old() -> None:
    sessions = tracker()
    sessions.user_turn(0)
    at_limit = sessions.user_turn(SESSION_GAP_US)
    assert (at_limit.session_id, at_limit.mode) == ("s1", "in_session")
    later = sessions.user_turn(2 * SESSION_GAP_US + 1)
    assert (later.session_id, later.mode, later.ended_session_id) == ("s2", "session_start", "s1")


def test_assistant_activity_keeps_the_session_alive() -> None:
    sessions = tracker()
    sessions.user_turn(0)
    sessions.touch(25 * MINUTE_US)
    assert sessions.user_turn(50 * MINUTE_US).mode == "in_session"


def test_a_call_deadline_is_what_is_left_of_the_turn_budget() -> None:
    now = [10.0]
    budget = TurnBudget.of_ms(200, clock=lambda: now[0])
    now[0] += 0.15
    assert abs(budget.timeout_s() - 0.05) < 1e-9
    now[0] += 0.1
    try:
        budget.timeout_s()
    except BudgetSpent:
        return
    raise AssertionError("a spent budget gave a deadline")
