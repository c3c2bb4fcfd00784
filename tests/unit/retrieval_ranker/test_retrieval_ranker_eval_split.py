"""The retrieval evaluation scores a split of LoCoMo: conversations keep their numbers."""

from __future__ import annotations

from memmesh.bench.eval_retrieval import numbered_conversations, user_id

CONVERSATIONS = [{"sample_id": f"conv-{n}"} for n in range(10)]


def test_the_held_out_split_leaves_the_dev_conversations_out_and_keeps_the_numbers() -> None:
    held_out = numbered_conversations(CONVERSATIONS, None, skip=2)
    assert [number for number, _ in held_out] == list(range(2, 10))
    assert held_out[0][1]["sample_id"] == "conv-2"
    # The users of conversation 2 are the same ones an unsplit run ingests.
    assert user_id(held_out[0][0], "Jon") == "locomo2-jon"


def test_limit_then_skip_and_the_default_takes_every_conversation() -> None:
    assert [n for n, _ in numbered_conversations(CONVERSATIONS, 2)] == [0, 1]
    assert [n for n, _ in numbered_conversations(CONVERSATIONS, 5, skip=3)] == [3, 4]
    assert len(numbered_conversations(CONVERSATIONS, None)) == 10
