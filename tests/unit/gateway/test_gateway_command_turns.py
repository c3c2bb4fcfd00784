"""A user turn that gives a command is acknowledged only once its extraction is done."""

from __future__ import annotations

import pytest

from memmesh.common.v1 import memory_pb2
from memmesh.engines.gateway.effects import carries_command


@pytest.mark.parametrize(
    "text",
    [
        "Please delete that.",
        "forget what I told you about my aunt",
        "off the record, my PIN is 4412",
        "stop mentioning my brother",
        "Forget everything about me.",
    ],
)
def test_a_user_turn_giving_a_command_carries_it(text: str) -> None:
    assert carries_command(memory_pb2.Turn(role=memory_pb2.ROLE_USER, text=text))


@pytest.mark.parametrize("text", ["my sister lives in Porto", "I forgot my keys at work"])
def test_ordinary_speech_carries_no_command(text: str) -> None:
    assert not carries_command(memory_pb2.Turn(role=memory_pb2.ROLE_USER, text=text))


def test_an_assistant_turn_never_carries_a_command() -> None:
    turn = memory_pb2.Turn(role=memory_pb2.ROLE_ASSISTANT, text="Please delete that.")
    assert not carries_command(turn)
