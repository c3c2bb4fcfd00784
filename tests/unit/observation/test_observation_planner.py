"""Token-threshold triggers and deterministic chunking within one conversation."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memmesh.errors import InvalidInput
from memmesh.observation import (
    Observation,
    ObservationKind,
    ObservationPlanner,
    ObservationSettings,
    ObservedTurn,
    planner_of,
)
from memmesh.observation.planner import turn_tokens

PLANNER = ObservationPlanner(
    message_threshold_tokens=100, observation_threshold_tokens=50, chunk_budget_tokens=120
)


def turns(count: int, words: int = 20, conversation_id: str = "c1") -> list[ObservedTurn]:
    return [
        ObservedTurn(
            conversation_id,
            f"t{i:03d}",
            "user" if i % 2 else "assistant",
            " ".join(["word"] * words),
            1_000 * i,
        )
        for i in range(count)
    ]


def test_the_observer_waits_for_enough_unobserved_tokens() -> None:
    few = turns(2)
    assert sum(turn_tokens(t) for t in few) < 100 and not PLANNER.should_observe(few)
    assert PLANNER.should_observe(turns(6))


def test_the_reflector_waits_for_enough_observation_tokens() -> None:
    note = Observation("User is moving to Lisbon in May.", ObservationKind.PLAN, ("t1",))
    assert not PLANNER.should_reflect([note])
    assert PLANNER.should_reflect([note] * 5)


def test_an_under_budget_conversation_is_one_pass() -> None:
    assert PLANNER.chunks("c1", turns(3)) == (tuple(turns(3)),)


def test_an_over_budget_conversation_is_cut_in_reading_order() -> None:
    chunks = PLANNER.chunks("c1", turns(10))
    assert len(chunks) > 1
    assert [t.turn_id for chunk in chunks for t in chunk] == [t.turn_id for t in turns(10)]
    assert all(sum(turn_tokens(t) for t in chunk) <= 120 for chunk in chunks)


def test_chunks_are_the_same_whatever_order_the_turns_come_in() -> None:
    shuffled = turns(10)
    random.Random(7).shuffle(shuffled)
    assert PLANNER.chunks("c1", shuffled) == PLANNER.chunks("c1", turns(10))


def test_a_turn_over_the_budget_is_a_chunk_of_its_own() -> None:
    long_turn = ObservedTurn("c1", "t-long", "user", "word " * 600, 5)
    chunks = PLANNER.chunks("c1", [*turns(2), long_turn])
    assert (long_turn,) in chunks


def test_chunking_refuses_turns_of_another_conversation() -> None:
    with pytest.raises(InvalidInput):
        PLANNER.chunks("c1", [*turns(3), *turns(1, conversation_id="c2")])


@given(st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=30))
def test_chunks_cover_every_turn_once_in_order(lengths: list[int]) -> None:
    given_turns = [
        ObservedTurn("c1", f"t{i:03d}", "user", "x" * n, i) for i, n in enumerate(lengths)
    ]
    chunks = PLANNER.chunks("c1", given_turns)
    assert [t for chunk in chunks for t in chunk] == given_turns
    assert all(len(c) == 1 or sum(turn_tokens(t) for t in c) <= 120 for c in chunks)


def test_the_chunk_budget_leaves_room_for_the_prompt_and_the_reply() -> None:
    settings = ObservationSettings(max_input_tokens=2000, max_output_tokens=400)
    planner = planner_of(settings)
    assert 0 < planner.chunk_budget_tokens < 2000 - 400
