"""'Don't resume automatically' and 'only resume if I ask' are RECALL_ONLY_IF_ASKED said of
resuming only (target "resume"): they turn auto-resume off and leave recall as it is; the
phrasings about memories in general keep the global mode (seed 001 §2.21, §2.22)."""

from __future__ import annotations

import pytest

from memmesh.extraction.commands import RESUME_ONLY_TARGET
from memmesh.extraction.model import Command
from memmesh.extraction.rules import extract


@pytest.mark.parametrize(
    "text",
    [
        "Don't resume automatically.",
        "Only resume if I ask.",
        "stop auto-resuming old chats",
        "don't automatically pick up where we left off",
        "Please don't resume our old threads automatically, ok?",
    ],
)
def test_resume_phrasings_name_resuming_only(text: str) -> None:
    result = extract(text)
    assert result.command is Command.RECALL_ONLY_IF_ASKED
    assert result.command_target == RESUME_ONLY_TARGET


@pytest.mark.parametrize(
    "text",
    [
        "Only recall if I ask.",
        "don't bring up old conversations unless I ask",
        "never volunteer what you know about me. I want to continue later",
        "only use my memories when I ask",
    ],
)
def test_memory_phrasings_keep_the_global_mode(text: str) -> None:
    result = extract(text)
    assert result.command is Command.RECALL_ONLY_IF_ASKED
    assert not result.command_target
