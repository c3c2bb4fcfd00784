"""Labelled units from an extraction corpus (the `../shared/fixtures/extraction` format).

A case lists the facts of a turn by the tokens their text must contain, not by clause; a
clause is labelled with a fact's category when it holds every one of those tokens, or, when
no single clause does, the clause holding most of them (a fact spread over two clauses).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..commands import detect_command
from ..model import Command
from ..text import normalize
from .units import Unit, turn_units

NONE = "none"
CLASSES = (NONE, "preference", "relationship", "identity", "constraint")


@dataclass(frozen=True)
class LabelledUnit:
    """A unit with the category it should get (`none` for no durable fact)."""

    unit: Unit
    label: str
    case_id: str


def read_cases(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every case of the given JSONL files, in file order."""
    cases: list[dict[str, Any]] = []
    for path in paths:
        with path.open(encoding="utf-8") as lines:
            cases.extend(json.loads(line) for line in lines if line.strip())
    return cases


def labelled_units(cases: Iterable[dict[str, Any]]) -> Iterator[LabelledUnit]:
    """The units of every case with their labels."""
    for case in cases:
        found = detect_command(normalize(case["text"]))
        if found.command is Command.DO_NOT_STORE:
            # Off the record: the clauses are durable-sounding but must never be learned as such.
            units = turn_units(normalize(case["text"]))
        else:
            units = turn_units(found.fact_text)
        labels = [NONE] * len(units)
        for fact in case.get("facts") or []:
            best = _best_unit(units, fact["must_contain"], taken=labels)
            if best is not None:
                labels[best] = fact["category"]
        for unit, label in zip(units, labels, strict=True):
            yield LabelledUnit(unit, label, case["id"])


def _best_unit(units: list[Unit], tokens: list[str], taken: list[str]) -> int | None:
    scored = []
    for position, unit in enumerate(units):
        text = unit.text.lower()
        hits = sum(token.lower() in text for token in tokens)
        if hits:
            scored.append((hits, taken[position] == NONE, -position, position))
    if not scored:
        return None
    hits, _, _, position = max(scored)
    return position if hits * 2 >= len(tokens) else None
