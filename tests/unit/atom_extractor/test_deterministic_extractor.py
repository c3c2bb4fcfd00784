"""The embedded extractor as the engine's TurnExtractor: the same answer as the rules'
function, computed without holding the engine's event loop."""

from __future__ import annotations

import asyncio
import threading
import time

from memmesh.engines.atom_extractor.adapters.rules_extractor import DeterministicExtractor
from memmesh.engines.atom_extractor.domain.capsule import TurnInput
from memmesh.extraction.model import ExtractionResult
from memmesh.extraction.rules import extract

TURN = TurnInput("t-1", "s-1", "user", "I'm allergic to peanuts")


async def test_it_answers_what_the_extract_function_gives() -> None:
    result, provenance = await DeterministicExtractor().extract("acme", "u-1", TURN, 0)
    assert result == extract(TURN.text, TURN.role)
    assert provenance is None


async def test_a_slow_extraction_leaves_the_event_loop_free_for_other_calls() -> None:
    started = threading.Event()

    def slow(text: str, role: str) -> ExtractionResult:
        started.set()
        time.sleep(0.3)  # a long sentence-encoder pass
        return extract(text, role)

    extraction = asyncio.create_task(DeterministicExtractor(slow).extract("acme", "u-1", TURN, 0))
    while not started.is_set():
        await asyncio.sleep(0.001)
    # Another call's work on the loop runs while the extraction is still going.
    loop_free_after = time.monotonic()
    await asyncio.sleep(0.01)
    assert time.monotonic() - loop_free_after < 0.2
    assert not extraction.done()
    result, _ = await extraction
    assert result.facts
