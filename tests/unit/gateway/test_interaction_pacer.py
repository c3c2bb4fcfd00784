"""Which user turns record the interaction in Current State: the first of each session, then
one per refresh interval of turn time (the ThreadStore keeps every turn's time)."""

from __future__ import annotations

from memmesh.engines.gateway.interactions import InteractionPacer

SECOND_US = 1_000_000
NOW_US = 1_767_225_600 * SECOND_US


def test_the_first_turn_of_a_session_is_recorded_then_one_a_minute() -> None:
    pacer = InteractionPacer(refresh_s=60)
    times = [0, 5, 59, 60, 61, 119, 120]
    due = [pacer.due("t", "u", "s1", NOW_US + s * SECOND_US) for s in times]
    assert due == [True, False, False, True, False, False, True]


def test_a_new_session_is_recorded_at_once() -> None:
    pacer = InteractionPacer(refresh_s=60)
    assert pacer.due("t", "u", "s1", NOW_US)
    assert pacer.due("t", "u", "s2", NOW_US + SECOND_US)
    # Back in the first session: it is not the session last recorded.
    assert pacer.due("t", "u", "s1", NOW_US + 2 * SECOND_US)


def test_an_older_turn_of_the_same_session_is_not_recorded() -> None:
    pacer = InteractionPacer(refresh_s=60)
    assert pacer.due("t", "u", "s1", NOW_US)
    assert not pacer.due("t", "u", "s1", NOW_US - 3600 * SECOND_US)


def test_users_and_tenants_are_paced_apart() -> None:
    pacer = InteractionPacer(refresh_s=60)
    assert pacer.due("t", "u", "s1", NOW_US)
    assert pacer.due("t", "v", "s1", NOW_US)
    assert pacer.due("other", "u", "s1", NOW_US)
    assert not pacer.due("t", "u", "s1", NOW_US + SECOND_US)


def test_a_zero_interval_records_every_newer_turn() -> None:
    pacer = InteractionPacer(refresh_s=0)
    assert all(pacer.due("t", "u", "s1", NOW_US + s) for s in range(5))


def test_the_users_kept_are_bounded_and_a_forgotten_user_is_recorded_again() -> None:
    pacer = InteractionPacer(refresh_s=60, max_users=2)
    for user in ("a", "b", "c"):
        assert pacer.due("t", user, "s1", NOW_US)
    # "a" was pushed out by "c": its next turn is recorded once more; "c" is still paced.
    assert pacer.due("t", "a", "s1", NOW_US + SECOND_US)
    assert not pacer.due("t", "c", "s1", NOW_US + SECOND_US)
    pacer.forget("t", "c")
    assert pacer.due("t", "c", "s1", NOW_US + 2 * SECOND_US)
