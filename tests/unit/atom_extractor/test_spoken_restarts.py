"""A spoken restart says the same words twice; the rules read them once."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.model import Command
from memmesh.extraction.text import normalize


@pytest.mark.parametrize(
    "said, read",
    [
        ("my uh my doctor is Dr Okafor", "my doctor is Dr Okafor"),
        ("delete what i told you about my about my diet", "delete what I told you about my diet"),
        ("it was very very good", "it was very good"),
        # Words that may be meant twice stay.
        ("I know that that is true", "I know that that is true"),
        ("I had had enough", "I had had enough"),
    ],
)
def test_a_restart_is_read_once(said, read):
    assert normalize(said) == read


def test_a_command_said_with_a_restart_is_heard():
    result = extract("forget this um this thread like the whole thing about the car loan")
    assert result.command is Command.FORGET_THREAD
