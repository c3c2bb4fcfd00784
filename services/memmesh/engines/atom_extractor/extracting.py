"""How a turn becomes an extraction result: the deterministic rules, or the semantic path with fallback."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.atom_extractor.capsule import ProvenanceEntry
from memmesh.extraction.model import ExtractionResult
from memmesh.extraction.rules import extract


@dataclass(frozen=True)
class TurnInput:
    """The parts of a turn extraction needs; role is "user" or "assistant"."""

    turn_id: str
    session_id: str
    role: str
    text: str


class TurnExtractor(Protocol):
    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        """The extraction and, for the semantic path, its provenance record."""
        ...


class DeterministicExtractor:
    """The seed 000/002 rules alone (the default mode)."""

    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        return extract(turn.text, turn.role), None
