"""The embedded extractor as the AtomExtractor's TurnExtractor (the default mode)."""

from __future__ import annotations

from collections.abc import Callable

from memmesh.engines.atom_extractor.domain.capsule import ProvenanceEntry, TurnInput
from memmesh.extraction.model import ExtractionResult
from memmesh.extraction.rules import extract as extract_by_rules

ExtractFunction = Callable[[str, str], ExtractionResult]


class DeterministicExtractor:
    """An in-process extractor (the rules, or the rules with the learned clause head): no
    provider, no provenance record, the same answer for the same turn."""

    def __init__(
        self,
        extract: ExtractFunction = extract_by_rules,
        forget_cached: Callable[[], None] = lambda: None,
    ) -> None:
        self._extract = extract
        self._forget_cached = forget_cached

    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        return self._extract(turn.text, turn.role), None

    def forget_cached(self) -> None:
        self._forget_cached()
