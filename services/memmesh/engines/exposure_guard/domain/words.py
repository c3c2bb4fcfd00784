"""Word-level topic matching: case-insensitive, whole words, plurals, possessives and the
-ed / -ing forms tolerated."""

from __future__ import annotations

import re

from memmesh.text import inflection_stem

_TOKEN = re.compile(r"[\w']+")
_WORD_CHAR = re.compile(r"[\w']")
_WORD_REST = re.compile(r"[\w']*")


def stems(folded: str) -> tuple[str, ...]:
    """Stems (inflection_stem: symmetric, and a stem keeps its word's prefix for probe_of) of
    the words of a folded text, in order."""
    return tuple(s for s in map(inflection_stem, _TOKEN.findall(folded)) if s)


def probe_of(phrase: tuple[str, ...]) -> str:
    """A substring every word whose stem is the phrase's longest stem starts with (after leading
    quotes): the stem itself, less its 'y' for stems of '-ies' words."""
    longest = longest_stem(phrase)
    return longest[:-1] if longest.endswith("y") and len(longest) > 1 else longest


def longest_stem(phrase: tuple[str, ...]) -> str:
    """The stem a phrase is probed by (the longest, the first among equals)."""
    return max(phrase, key=len)


def word_at(folded: str, position: int) -> str | None:
    """The whole word (a run of word characters and quotes) starting at position, leading quotes
    included; None when position is inside a word rather than at its start."""
    start = position
    while start and folded[start - 1] == "'":
        start -= 1
    if start and _WORD_CHAR.match(folded, start - 1):
        return None
    end = _WORD_REST.match(folded, position).end()  # type: ignore[union-attr]
    return folded[start:end]


def has_phrase(folded: str, phrase: tuple[str, ...]) -> bool:
    """True when the folded text holds the phrase (stems) as consecutive whole words."""
    words = stems(folded)
    width = len(phrase)
    return any(words[i : i + width] == phrase for i in range(len(words) - width + 1))
