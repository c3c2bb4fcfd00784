"""Canonical inputs, their hashes, and the one-conversation and one-thread invariants."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memmesh.errors import InvalidInput
from memmesh.observation import (
    ConversationObservations,
    Observation,
    ObservationKind,
    ObservedTurn,
    ThreadState,
)
from memmesh.observation.canonical import (
    content_hash,
    conversation_turns,
    observer_input,
    thread_batches,
)

TURNS = [
    ObservedTurn("c1", "t1", "user", "I'm moving to Lisbon in May.", 1_000),
    ObservedTurn("c1", "t2", "assistant", "Exciting! Found a place yet?", 2_000),
    ObservedTurn("c1", "t3", "user", "Not yet, I prefer Alfama.", 3_000),
]


def test_input_hash_ignores_dict_key_order() -> None:
    first = {"conversation_id": "c1", "turns": [{"turn_id": "t1", "text": "hi", "time_us": 1}]}
    second = {"turns": [{"time_us": 1, "text": "hi", "turn_id": "t1"}], "conversation_id": "c1"}
    assert content_hash(first) == content_hash(second)


def test_input_hash_ignores_the_order_turns_are_given_in() -> None:
    shuffled = [TURNS[2], TURNS[0], TURNS[1]]
    assert content_hash(observer_input("c1", shuffled)) == content_hash(observer_input("c1", TURNS))


def test_input_hash_changes_with_any_word() -> None:
    changed = [
        TURNS[0],
        TURNS[1],
        ObservedTurn("c1", "t3", "user", "Not yet, I prefer Baixa.", 3_000),
    ]
    assert content_hash(observer_input("c1", changed)) != content_hash(observer_input("c1", TURNS))


def test_input_hash_is_the_same_in_another_process() -> None:
    script = (
        "from memmesh.observation.canonical import content_hash;"
        "print(content_hash({'b': [1, 'é'], 'a': {'y': 2, 'x': 1}}))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": ":".join(sys.path)},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert runs == {content_hash({"a": {"x": 1, "y": 2}, "b": [1, "é"]})}


def test_turns_of_two_conversations_are_refused() -> None:
    mixed = [*TURNS, ObservedTurn("c2", "t9", "user", "Another chat.", 4_000)]
    with pytest.raises(InvalidInput) as refused:
        conversation_turns("c1", mixed)
    assert [v.field for v in refused.value.violations] == ["turns[3].conversation_id"]


def test_repeated_turn_ids_are_refused() -> None:
    with pytest.raises(InvalidInput):
        conversation_turns("c1", [TURNS[0], TURNS[0]])


def test_turns_are_read_in_time_order() -> None:
    assert [t.turn_id for t in conversation_turns("c1", TURNS[::-1])] == ["t1", "t2", "t3"]


def test_observations_of_another_thread_are_refused() -> None:
    note = Observation("User prefers Alfama.", ObservationKind.PREFERENCE, ("t3",))
    batches = [
        ConversationObservations("th-1", "c1", (note,)),
        ConversationObservations("th-2", "c2", (note,)),
    ]
    with pytest.raises(InvalidInput) as refused:
        thread_batches(ThreadState("th-1"), batches)
    assert [v.field for v in refused.value.violations] == ["batches[1].thread_id"]
