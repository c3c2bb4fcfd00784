"""Redaction of archived turn text (seed 001 §2.11.5, §2.11.11: forget means forget).

The unit removed is the sentence: every sentence of a turn that holds a forget term goes,
whole, and the others stay as they were. Terms are compared case- and whitespace-
insensitively, as whole words (a term "Porto" matches "porto" and "PORTO," but not
"Portobello"); a term that runs over a sentence end removes every sentence it touches.
With no usable term, or when no sentence is left, the whole text goes and the turn stays
as an empty stub, so the session keeps its order and its counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.text import sentences


@dataclass(frozen=True)
class Redacted:
    """The text left after a redaction, and whether the text changed."""

    text: str
    changed: bool


def normalised(text: str) -> str:
    """Casefolded, with every run of whitespace made one space and the ends trimmed."""
    return " ".join(text.casefold().split())


def usable_terms(terms: Sequence[str]) -> list[str]:
    """The distinct normalised terms that are not blank, longest first."""
    kept = {normalised(term) for term in terms}
    kept.discard("")
    return sorted(kept, key=lambda term: (-len(term), term))


def _pattern(terms: Sequence[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(term) for term in terms)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


def redact(text: str, terms: Sequence[str]) -> Redacted:
    """The text without the sentences that hold any of the terms (all of it without terms)."""
    wanted = usable_terms(terms)
    if not wanted:
        return Redacted("", bool(text))
    parts = sentences(text)
    # The normalised sentences joined by one space, with each one's span, so a match can be
    # traced back to every sentence it overlaps.
    spans: list[tuple[int, int]] = []
    joined: list[str] = []
    at = 0
    for part in parts:
        flat = normalised(part)
        spans.append((at, at + len(flat)))
        joined.append(flat)
        at += len(flat) + 1
    removed: set[int] = set()
    for match in _pattern(wanted).finditer(" ".join(joined)):
        start, end = match.span()
        removed.update(n for n, (a, b) in enumerate(spans) if a < end and start < b)
    if not removed:
        return Redacted(text, False)
    kept = " ".join(part for n, part in enumerate(parts) if n not in removed)
    return Redacted(kept, True)


def holds_any(text: str, terms: Sequence[str]) -> bool:
    """True when the text holds any of the terms as redact() matches them."""
    wanted = usable_terms(terms)
    return bool(wanted) and _pattern(wanted).search(normalised(text)) is not None
