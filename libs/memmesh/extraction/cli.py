"""`memmesh extract`: one utterance per input line, one JSON result per output line."""

from __future__ import annotations

import json
from typing import Any, TextIO

from .model import BASIS_POINTS_MAX, ExtractionResult
from .rules import extract


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


def cli_extract(stdin: TextIO, stdout: TextIO) -> int:
    """Read utterances line by line and write one JSON object per line; returns the exit code."""
    for line in stdin:
        utterance = line.rstrip("\r\n")
        stdout.write(json.dumps(result_to_json(extract(utterance)), ensure_ascii=False) + "\n")
    stdout.flush()
    return 0
