"""The deterministic Observer and Reflector on realistic conversations: bounded, the same
bytes every time, told in the third person, decisions and open questions picked up."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from observation_conversations import Conversation, load_conversations

from memmesh.observation import ObservationSettings, Observer, Reflector
from memmesh.observation.canonical import content_hash, observations_output
from memmesh.observation.model import (
    MAX_LEFT_OFF,
    MAX_LEFT_OFF_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_SUMMARY_CHARS,
    ConversationObservations,
    ObservationKind,
    ObservedTurn,
    ThreadState,
)
from memmesh.observation.rules_observer import observe_by_rules
from memmesh.observation.rules_reflector import reflect_by_rules

FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|me|my|mine|we|we're|our|us)\b", re.IGNORECASE)
KITCHEN = ThreadState(
    "th-kitchen",
    title="Kitchen renovation with Marco",
    key_entities=("Marco",),
    last_decisions=("Go with oak cabinets",),
    unresolved_questions=("Should we move the sink under the window?",),
    next_step="Call Marco on Monday about the plumber",
)


@pytest.fixture(params=load_conversations(), ids=lambda c: c.conversation_id)
def conversation(request: pytest.FixtureRequest) -> Conversation:
    return request.param  # type: ignore[no-any-return]


def by_kind(conversation: Conversation, kind: ObservationKind) -> list[str]:
    observations = observe_by_rules(conversation.turns, 12)
    return [o.text for o in observations if o.kind is kind]


def test_observations_are_bounded_and_cite_their_turns(conversation: Conversation) -> None:
    observations = observe_by_rules(conversation.turns, 12)
    ids = {t.turn_id for t in conversation.turns}
    assert observations and len(observations) <= 12
    for observation in observations:
        assert 0 < len(observation.text) <= MAX_OBSERVATION_CHARS
        assert observation.turn_ids and set(observation.turn_ids) <= ids


def test_observations_are_told_in_the_third_person(conversation: Conversation) -> None:
    for observation in observe_by_rules(conversation.turns, 12):
        assert not FIRST_PERSON.search(observation.text), observation.text
        assert not re.search(r"\b(?:um|uh|you know)\b", observation.text, re.IGNORECASE)


def test_the_same_turns_give_the_same_bytes(conversation: Conversation) -> None:
    shuffled = list(conversation.turns)
    random.Random(3).shuffle(shuffled)
    first = observe_by_rules(conversation.turns, 12)
    again = observe_by_rules(sorted(shuffled, key=lambda t: (t.time_us, t.turn_id)), 12)
    assert content_hash(observations_output(first)) == content_hash(observations_output(again))


def test_decisions_open_questions_and_plans_are_picked_up(conversation: Conversation) -> None:
    expect = conversation.expect
    for kind, key in (
        (ObservationKind.DECISION, "decisions"),
        (ObservationKind.QUESTION, "open"),
        (ObservationKind.PLAN, "plans"),
    ):
        texts = " ".join(by_kind(conversation, kind))
        assert all(word in texts for word in expect[key]), (key, texts)
        if not expect[key]:
            assert kind is ObservationKind.PLAN or not texts, (key, texts)


def test_credentials_never_become_observations(conversation: Conversation) -> None:
    texts = " ".join(o.text for o in observe_by_rules(conversation.turns, 12))
    assert not any(secret in texts for secret in conversation.expect.get("absent", []))
    assert "REDACTED" not in texts


def test_fillers_and_hedges_are_dropped_in_the_third_person() -> None:
    turn = ObservedTurn("c", "t1", "user", "I'm moving to Lisbon in May, um, I think.", 1)
    [observation] = observe_by_rules([turn], 12)
    assert (observation.text, observation.kind) == (
        "User is moving to Lisbon in May.",
        ObservationKind.PLAN,
    )


def test_a_decision_that_points_back_names_the_assistants_proposal() -> None:
    kitchen = next(c for c in load_conversations() if c.conversation_id == "kitchen")
    [decision] = [
        o for o in observe_by_rules(kitchen.turns, 12) if o.kind is ObservationKind.DECISION
    ]
    assert decision.text == "User decided to go with oak cabinets with brass handles."
    assert decision.turn_ids == ("kitchen-t4", "kitchen-t5")


def test_a_question_a_later_decision_settles_is_not_left_open() -> None:
    turns = [
        ObservedTurn("c", "t1", "user", "Should we paint the hallway green or grey?", 1),
        ObservedTurn("c", "t2", "assistant", "Grey is calmer.", 2),
        ObservedTurn("c", "t3", "user", "Okay, let's go with grey for the hallway.", 3),
    ]
    kinds = [o.kind for o in observe_by_rules(turns, 12)]
    assert kinds == [ObservationKind.DECISION]


def test_over_the_cap_decisions_and_plans_are_kept_first() -> None:
    chatter = [
        ObservedTurn("c", f"t{i:02d}", "user", f"The hallway lamp number {i} is very bright.", i)
        for i in range(10)
    ]
    decision = ObservedTurn("c", "t99", "user", "We decided on the brass lamp.", 99)
    observations = observe_by_rules([*chatter, decision], 3)
    assert len(observations) == 3 and observations[-1].kind is ObservationKind.DECISION


def test_the_reflection_is_abstractive_with_left_off_bullets() -> None:
    kitchen = next(c for c in load_conversations() if c.conversation_id == "kitchen")
    batch = ConversationObservations("th-kitchen", "kitchen", observe_by_rules(kitchen.turns, 12))
    summary, left_off = reflect_by_rules(KITCHEN, [batch])
    assert summary == (
        "Kitchen renovation with Marco: chose oak cabinets with brass handles; budget 12k. "
        "Open: whether to move the sink under the window. "
        "Next: call Marco on Monday about the plumber."
    )
    assert left_off == (
        "Next step: call Marco on Monday about the plumber",
        "Decided: chose oak cabinets with brass handles",
        "Still open: whether to move the sink under the window",
    )


def test_reflections_are_bounded_and_shorter_than_their_input(conversation: Conversation) -> None:
    observations = observe_by_rules(conversation.turns, 12)
    batch = ConversationObservations("th", conversation.conversation_id, observations)
    summary, left_off = reflect_by_rules(ThreadState("th"), [batch])
    assert 0 < len(summary) <= MAX_SUMMARY_CHARS
    assert len(summary) < sum(len(o.text) for o in observations) or len(observations) == 1
    assert 1 <= len(left_off) <= MAX_LEFT_OFF
    assert all(0 < len(b) <= MAX_LEFT_OFF_CHARS for b in left_off)


def test_a_thread_with_nothing_yet_still_gets_one_bullet() -> None:
    summary, left_off = reflect_by_rules(ThreadState("th", title="Garden"), [])
    assert summary == "Garden." and left_off == ("Last discussed: Garden",)


async def test_deterministic_mode_records_rules_provenance() -> None:
    kitchen = next(c for c in load_conversations() if c.conversation_id == "kitchen")
    observer, reflector = Observer(ObservationSettings()), Reflector(ObservationSettings())
    [first] = await observer.observe("kitchen", kitchen.turns)
    [again] = await observer.observe("kitchen", kitchen.turns[::-1])
    assert first.observations == again.observations
    assert first.provenance.input_hash == again.provenance.input_hash
    assert first.provenance.output_hash == again.provenance.output_hash
    assert (first.provenance.provider, first.provenance.fallback_used) == ("rules", False)
    reflection = await reflector.reflect(
        KITCHEN, [ConversationObservations("th-kitchen", "kitchen", first.observations)]
    )
    assert reflection.summary.startswith("Kitchen renovation with Marco:")
    assert reflection.provenance.attempt_count == 0 and not reflection.provenance.fallback_used


_SPEECH = st.lists(
    st.sampled_from(
        "I I'm we my um uh like you know so well let's go with decided the oak sink Marco 12k "
        "should move? . , ! maybe think prefer hate next week tomorrow call need to".split()
    ),
    max_size=40,
).map(" ".join)


@given(st.lists(_SPEECH, min_size=1, max_size=8), st.integers(min_value=1, max_value=6))
def test_any_speech_gives_bounded_cited_observations(texts: list[str], cap: int) -> None:
    turns = [
        ObservedTurn("c", f"t{i}", "user" if i % 3 else "assistant", text, i)
        for i, text in enumerate(texts)
    ]
    observations = observe_by_rules(turns, cap)
    assert len(observations) <= cap
    assert observe_by_rules(turns, cap) == observations
    ids = {t.turn_id for t in turns}
    for observation in observations:
        assert 0 < len(observation.text) <= MAX_OBSERVATION_CHARS
        assert set(observation.turn_ids) <= ids
    summary, left_off = reflect_by_rules(
        ThreadState("th"), [ConversationObservations("th", "c", observations)]
    )
    assert 0 < len(summary) <= MAX_SUMMARY_CHARS and 1 <= len(left_off) <= MAX_LEFT_OFF
