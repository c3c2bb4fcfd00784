"""The pattern learner on its own: observations of requests, seed 002 thresholds, decay,
determinism, one pattern per signature, and which observations a forget takes."""

from __future__ import annotations

import random
from dataclasses import fields, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.extraction.patterns import (
    DECAY_WINDOW_US,
    MICROS_PER_DAY,
    Observation,
    ObservationErasure,
    assess,
    infer,
    observe,
    pattern_key,
)

HOUR = 3_600_000_000
# 2026-01-05 is a Monday; 19:00 UTC is evening.
MONDAY_EVENING = 1_767_639_600_000_000
LOFI = "play|lo-fi"


def seen(
    signature: str = LOFI,
    turn: str = "t1",
    session: str = "s1",
    at: int = MONDAY_EVENING,
    negated: bool = False,
) -> Observation:
    verb = signature.partition("|")[0]
    return Observation(turn, session, at, signature, verb, "lo-fi", "request", negated)


def evenings(count: int, sessions: int, signature: str = LOFI) -> list[Observation]:
    """`count` turns on consecutive evenings spread round-robin over `sessions` conversations."""
    return [
        seen(signature, f"t{i}", f"s{i % sessions}", MONDAY_EVENING + i * MICROS_PER_DAY)
        for i in range(count)
    ]


def signatures(text: str) -> list[str]:
    return [o.signature for o in observe(text, "t", "s", MONDAY_EVENING)]


def test_the_same_request_in_other_words_has_one_signature() -> None:
    assert signatures("play some lo-fi") == [LOFI]
    assert signatures("Can you play some lo-fi music please?") == [LOFI]
    assert signatures("put on some lo-fi") == [LOFI]
    assert signatures("ok, and then play some lo-fi") == [LOFI]
    assert signatures("what's the weather in Lyon today?") == ["ask|lyon weather"]
    assert signatures("can you tell me what the weather is like in Lyon") == ["ask|lyon weather"]
    assert signatures("Set a timer for 25 minutes.") == signatures("set a timer for 25 minutes")
    assert signatures("set a timer for 25 minutes") != signatures("set a timer for 10 minutes")


def test_statements_greetings_and_hypotheticals_are_no_requests() -> None:
    for text in (
        "I'm allergic to peanuts",
        "my partner Joaquin works night shifts as an ER nurse",
        "how are you?",
        "thanks!",
        "if you could play jazz that would be great",
        "I always listen to lo-fi when I work",
        "just finished my run",
        "and then we had dinner",
    ):
        assert observe(text, "t", "s", MONDAY_EVENING) == (), text


def test_a_declined_request_is_a_negated_observation() -> None:
    (declined,) = observe("don't play lo-fi", "t", "s", MONDAY_EVENING)
    (stopped,) = observe("stop playing lo-fi", "t", "s", MONDAY_EVENING)
    assert declined.signature == stopped.signature == LOFI
    assert declined.negated and stopped.negated


def test_an_observation_keeps_the_signature_and_label_only() -> None:
    text = "Hey it's Priya, my boss Ama was awful today, can you play some lo-fi for me?"
    (observation,) = observe(text, "t9", "s3", MONDAY_EVENING)
    stored = " ".join(str(getattr(observation, f.name)) for f in fields(observation))
    for word in ("Priya", "Ama", "boss", "awful"):
        assert word not in stored
    assert observation.label == "lo-fi" and observation.turn_id == "t9"


def test_a_turn_yields_at_most_one_observation_per_signature() -> None:
    found = observe("play some lo-fi. Play lo-fi music!", "t", "s", MONDAY_EVENING)
    assert [o.signature for o in found] == [LOFI]


def test_fewer_than_three_turns_or_one_conversation_make_no_pattern() -> None:
    now = MONDAY_EVENING + 3 * MICROS_PER_DAY
    assert infer(evenings(2, 2), now) == []
    assert infer(evenings(5, 1), now) == []


def test_three_evenings_in_two_conversations_are_a_proposal() -> None:
    (pattern,) = infer(evenings(3, 2), MONDAY_EVENING + 3 * MICROS_PER_DAY)
    assert pattern.confidence_bp == 7500 and not pattern.applied
    assert pattern.support_turns == 3 and pattern.support_sessions == 2


def test_three_evenings_in_three_conversations_are_applied_with_their_evidence() -> None:
    (pattern,) = infer(evenings(3, 3), MONDAY_EVENING + 3 * MICROS_PER_DAY)
    # seed 002: "0.90: pattern observed 3+ times, clear consistency".
    assert pattern.confidence_bp == 9000 and pattern.applied
    assert pattern.evidence_turn_ids == ("t0", "t1", "t2")
    assert pattern.text == "User often asks to play lo-fi in the evening."
    assert pattern.key == pattern_key(LOFI) == "preference.pattern.play_lo-fi"


def test_requests_at_no_regular_time_score_lower() -> None:
    hours = (7, 13, 20)
    spread = [
        seen(LOFI, f"t{i}", f"s{i}", MONDAY_EVENING + i * MICROS_PER_DAY + (h - 19) * HOUR)
        for i, h in enumerate(hours)
    ]
    (pattern,) = infer(spread, MONDAY_EVENING + 4 * MICROS_PER_DAY)
    assert pattern.confidence_bp == 8000 and pattern.applied
    assert pattern.text == "User often asks to play lo-fi."


def test_declining_since_is_a_contradiction() -> None:
    observations = [
        *evenings(3, 3),
        seen(LOFI, "t9", "s9", MONDAY_EVENING + 4 * MICROS_PER_DAY, True),
    ]
    assert infer(observations, MONDAY_EVENING + 5 * MICROS_PER_DAY) == []
    # Asked again after declining: the pattern stands.
    again = [*observations, seen(LOFI, "t10", "s10", MONDAY_EVENING + 5 * MICROS_PER_DAY)]
    (pattern,) = infer(again, MONDAY_EVENING + 6 * MICROS_PER_DAY)
    assert pattern.applied


def test_a_pattern_not_observed_for_a_window_decays_and_then_expires() -> None:
    observations = evenings(3, 3)
    last = observations[-1].observe_time_us
    assert assess(observations, last + DECAY_WINDOW_US - 1).confidence_bp == 9000  # type: ignore[union-attr]
    decayed = assess(observations, last + DECAY_WINDOW_US)
    assert decayed is not None and decayed.confidence_bp == 8000 and decayed.applied
    assert assess(observations, last + 2 * DECAY_WINDOW_US) is None


def test_re_observation_refreshes_a_decayed_pattern() -> None:
    observations = evenings(3, 3)
    later = observations[-1].observe_time_us + 20 * MICROS_PER_DAY
    refreshed = assess([*observations, seen(LOFI, "t7", "s7", later)], later)
    assert refreshed is not None and refreshed.confidence_bp == 9000
    assert refreshed.last_seen_us == later and refreshed.evidence_turn_ids[-1] == "t7"


def test_observations_beyond_the_support_horizon_are_no_evidence() -> None:
    observations = evenings(3, 3)
    far = observations[-1].observe_time_us + 60 * MICROS_PER_DAY
    assert assess([*observations, seen(LOFI, "t7", "s7", far)], far) is None


def test_one_pattern_per_signature_whatever_the_wording() -> None:
    observations = evenings(3, 3)
    reworded = [
        *observations,
        replace(seen(LOFI, "t5", "s5", MONDAY_EVENING + 5 * MICROS_PER_DAY), label="lo-fi music"),
    ]
    patterns = infer(reworded, MONDAY_EVENING + 6 * MICROS_PER_DAY)
    assert [p.key for p in patterns] == ["preference.pattern.play_lo-fi"]
    assert patterns[0].text == "User often asks to play lo-fi music in the evening."


def test_separate_signatures_are_separate_patterns() -> None:
    timer = "set|25 minut timer"
    observations = [*evenings(3, 3), *evenings(4, 3, timer)]
    patterns = infer(observations, MONDAY_EVENING + 5 * MICROS_PER_DAY)
    assert [p.signature for p in patterns] == [LOFI, timer]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([LOFI, "set|25 minut timer", "ask|lyon weather"]),
            st.integers(0, 40),
            st.integers(0, 23),
            st.integers(0, 4),
            st.booleans(),
        ),
        max_size=30,
    ),
    st.randoms(use_true_random=False),
)
def test_inference_is_deterministic_and_within_seed_thresholds(
    drawn: list[tuple[str, int, int, int, bool]], shuffler: random.Random
) -> None:
    observations = [
        seen(sig, f"t{i}", f"s{session}", MONDAY_EVENING + day * MICROS_PER_DAY + hour * HOUR, neg)
        for i, (sig, day, hour, session, neg) in enumerate(drawn)
    ]
    now = MONDAY_EVENING + 45 * MICROS_PER_DAY
    patterns = infer(observations, now)
    shuffled = list(observations)
    shuffler.shuffle(shuffled)
    assert infer(shuffled, now) == patterns
    assert len({p.key for p in patterns}) == len(patterns)
    for pattern in patterns:
        assert 7500 <= pattern.confidence_bp <= 9000
        assert pattern.applied == (pattern.confidence_bp >= 8000)
        assert pattern.support_turns >= 3 and pattern.support_sessions >= 2
        evidence = {o.turn_id for o in observations if o.signature == pattern.signature}
        assert set(pattern.evidence_turn_ids) <= evidence


def test_a_forget_takes_whole_turns_conversations_patterns_and_objects_holding_its_terms() -> None:
    lofi = seen(LOFI, "t1", "s1")
    weather = Observation("t2", "s2", MONDAY_EVENING, "ask|lyon weather", "ask", "weather in Lyon")
    assert ObservationErasure(everything=True).covers(lofi)
    assert ObservationErasure(session_ids=("s1",)).covers(lofi)
    assert not ObservationErasure(session_ids=("s1",)).covers(weather)
    assert ObservationErasure(turn_ids=("t2",)).covers(weather)
    assert ObservationErasure(signatures=(LOFI,)).covers(lofi)
    assert ObservationErasure(terms=("Lyon",)).covers(weather)
    # A term is looked for in the object, not the verb: forgetting "play" takes no request.
    assert not ObservationErasure(terms=("play", "ask")).covers(lofi)
    assert not ObservationErasure(terms=("ask",)).covers(weather)
    assert ObservationErasure().is_empty()
