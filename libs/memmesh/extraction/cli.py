"""`memmesh extract`: one utterance per input line, one JSON result per output line."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TextIO

from .model import BASIS_POINTS_MAX, ExtractionResult
from .rules import extract as extract_by_rules


def result_to_json(result: ExtractionResult) -> dict[str, Any]:
    """The seed 000 output shape, plus command and correction; confidence as bp/10000."""
    command = result.command.value if result.command else None
    correction = (
        {"heard": result.correction.heard, "meant": result.correction.meant}
        if result.correction
        else None
    )
    if not result.relevant:
        return {"relevant": False, "command": command, "correction": correction}
    facts = [
        {
            "text": f.text,
            "category": f.category,
            "confidence": f.confidence_bp / BASIS_POINTS_MAX,
            "type": f.type.value,
            "key": f.key,
        }
        for f in result.facts
    ]
    return {"relevant": True, "facts": facts, "command": command, "correction": correction}


def cli_extract(stdin: TextIO, stdout: TextIO, *, rules_only: bool = False) -> int:
    """Read utterances line by line and write one JSON object per line; returns the exit code.
    The default is the engine's embedded path (rules plus the learned clause head)."""
    if rules_only:
        extract: Callable[[str], ExtractionResult] = extract_by_rules
    else:
        from .learned import default_hybrid_extractor

        extract = default_hybrid_extractor().extract
    for line in stdin:
        utterance = line.rstrip("\r\n")
        stdout.write(json.dumps(result_to_json(extract(utterance)), ensure_ascii=False) + "\n")
    stdout.flush()
    return 0
