"""Session rules of seed 003: new session id or a gap above 30 minutes starts a session."""

from __future__ import annotations

from memmesh.engines.thread_store.domain.model import Mode, UserActivity
from memmesh.engines.thread_store.domain.sessions import DEFAULT_SESSION_GAP_US, session_mode

T0 = 1_767_225_600_000_000
LAST = UserActivity(last_interaction_us=T0, last_session_id="s1")


def test_first_turn_of_a_user_starts_a_session() -> None:
    assert session_mode(False, None, T0, DEFAULT_SESSION_GAP_US) == Mode.SESSION_START


def test_a_new_session_id_starts_a_session_even_a_second_later() -> None:
    assert session_mode(False, LAST, T0 + 1_000_000, DEFAULT_SESSION_GAP_US) == Mode.SESSION_START


def test_a_gap_of_exactly_thirty_minutes_is_still_in_session() -> None:
    assert DEFAULT_SESSION_GAP_US == 30 * 60 * 1_000_000
    assert (
        session_mode(True, LAST, T0 + DEFAULT_SESSION_GAP_US, DEFAULT_SESSION_GAP_US)
        == Mode.IN_SESSION
    )


def test_a_gap_above_thirty_minutes_starts_a_session() -> None:
    assert (
        session_mode(True, LAST, T0 + DEFAULT_SESSION_GAP_US + 1, DEFAULT_SESSION_GAP_US)
        == Mode.SESSION_START
    )


def test_the_threshold_is_configurable() -> None:
    assert session_mode(True, LAST, T0 + 61_000_000, 60_000_000) == Mode.SESSION_START
    assert session_mode(True, LAST, T0 + 59_000_000, 60_000_000) == Mode.IN_SESSION


def test_a_late_turn_older_than_the_last_interaction_stays_in_session() -> None:
    assert session_mode(True, LAST, T0 - 5_000_000, DEFAULT_SESSION_GAP_US) == Mode.IN_SESSION
