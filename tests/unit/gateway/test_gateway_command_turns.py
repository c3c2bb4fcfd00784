"""A user turn that gives a command is acknowledged only once its extraction is done."""

from __future__ import annotations

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2
from memmesh.engines.gateway.effects import spoken_command


@pytest.mark.parametrize(
    ("text", "command", "target"),
    [
        ("Please delete that.", extractor_pb.COMMAND_FORGET, ""),
        ("forget what I told you about my aunt", extractor_pb.COMMAND_FORGET, "aunt"),
        ("off the record, my PIN is 4412", extractor_pb.COMMAND_DO_NOT_STORE, ""),
        ("stop mentioning my brother", extractor_pb.COMMAND_DO_NOT_MENTION, "brother"),
        ("Forget everything about me.", extractor_pb.COMMAND_FORGET_EVERYTHING, ""),
    ],
)
def test_a_user_turn_giving_a_command_carries_it(text: str, command: int, target: str) -> None:
    spoken = spoken_command(memory_pb2.Turn(role=memory_pb2.ROLE_USER, text=text))
    assert spoken is not None
    assert (spoken.command, spoken.target) == (command, target)


@pytest.mark.parametrize("text", ["my sister lives in Porto", "I forgot my keys at work"])
def test_ordinary_speech_carries_no_command(text: str) -> None:
    assert spoken_command(memory_pb2.Turn(role=memory_pb2.ROLE_USER, text=text)) is None


def test_an_assistant_turn_never_carries_a_command() -> None:
    turn = memory_pb2.Turn(role=memory_pb2.ROLE_ASSISTANT, text="Please delete that.")
    assert spoken_command(turn) is None
