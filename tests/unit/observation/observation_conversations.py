"""The realistic conversations of fixtures/observation, as ObservedTurns."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memmesh.observation import ObservedTurn

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "observation" / "conversations.jsonl"


@dataclass(frozen=True)
class Conversation:
    conversation_id: str
    turns: tuple[ObservedTurn, ...]
    expect: dict[str, Any]


def load_conversations() -> list[Conversation]:
    conversations = []
    for line in FIXTURES.read_text().splitlines():
        row = json.loads(line)
        turns = tuple(ObservedTurn(row["conversation_id"], **turn) for turn in row["turns"])
        conversations.append(Conversation(row["conversation_id"], turns, row["expect"]))
    return conversations
