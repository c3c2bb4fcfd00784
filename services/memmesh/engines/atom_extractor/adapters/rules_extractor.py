"""The seed 000/002 rules as the AtomExtractor's TurnExtractor (the default mode)."""

from __future__ import annotations

from memmesh.engines.atom_extractor.domain.capsule import ProvenanceEntry, TurnInput
from memmesh.extraction.model import ExtractionResult
from memmesh.extraction.rules import extract


class DeterministicExtractor:
    """The rules alone: no provider, no provenance record."""

    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        return extract(turn.text, turn.role), None
