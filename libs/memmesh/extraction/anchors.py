"""Words a regular expression cannot match without: a cheap test that skips a pattern.

The command patterns are many and long (each tries a list of lead-ins at every position of
a clause), and most clauses hold none of their words. `required_words` reads a pattern's
parse and finds sets of strings (in lower case) such that every match holds one string of
each set; a text lacking every string of some set is not searched at all. The answer is
conservative: a pattern for which no such set is known is always searched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

Words = frozenset[str]
# Sets of words, all of which a match needs one word of (a match needs "forget" and one of
# "my ex", "her"...): the most selective set first.
Requirements = tuple[Words, ...]

# Items that consume nothing: the literals before and after them are next to each other.
_ZERO_WIDTH = frozenset({sre.AT, sre.ASSERT, sre.ASSERT_NOT})
_REPEATS = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT})


def required_words(pattern: re.Pattern[str]) -> Requirements:
    """Sets of strings (lower case), every match of `pattern` containing one string of each;
    empty when none is known. Only for case-insensitive ASCII use: see `WordScreen`."""
    found = _requirements(sre_parse.parse(pattern.pattern, pattern.flags))
    return tuple(sorted(set(found), key=_selectivity, reverse=True))


class WordScreen:
    """Which of several patterns a text may match, from the words each one requires: one
    substring test per distinct word, then one integer test per pattern (each requirement
    a bit, each word the bits of the requirements it meets)."""

    def __init__(self, requirements: Sequence[Requirements]) -> None:
        bits: dict[Words, int] = {}
        for needed in requirements:
            for words in needed:
                bits.setdefault(words, 1 << len(bits))
        meets: dict[str, int] = {}
        for words, bit in bits.items():
            for word in words:
                meets[word] = meets.get(word, 0) | bit
        self._words = tuple(meets.items())
        self._needs = tuple(sum(bits[words] for words in set(needed)) for needed in requirements)

    def passing(self, lowered: str) -> list[bool]:
        """For each pattern, False only when the lower-cased ASCII text lacks every word
        of one of its requirements (it cannot match)."""
        met = 0
        for word, bits in self._words:
            if word in lowered:
                met |= bits
        return [needs & met == needs for needs in self._needs]


def _requirements(items: Iterable[tuple[Any, Any]]) -> list[Words]:
    """What the items matched one after another need: each run of literals, and what each
    group, alternation or repetition (of at least one) needs of its own."""
    found: list[Words] = []
    run: list[str] = []

    def end_run() -> None:
        if run:
            found.append(frozenset({"".join(run)}))
            run.clear()

    for op, value in items:
        if op is sre.LITERAL and chr(value).isascii():
            run.append(chr(value).lower())
        elif op in _ZERO_WIDTH:
            continue
        else:
            end_run()
            found.extend(_item(op, value))
    end_run()
    return found


def _item(op: Any, value: Any) -> list[Words]:
    if op is sre.SUBPATTERN:
        return _requirements(value[-1])
    if op is sre.BRANCH:
        # One alternative or another: the best requirement of each, joined.
        best = [max(_requirements(branch), key=_selectivity, default=None) for branch in value[1]]
        if any(words is None for words in best):
            return []
        return [frozenset().union(*(words for words in best if words is not None))]
    if op in _REPEATS:
        low, _high, body = value
        return _requirements(body) if low >= 1 else []
    return []


def _selectivity(words: Words) -> tuple[int, int]:
    # The shortest word decides how often the test passes; fewer words are cheaper.
    return min(len(word) for word in words), -len(words)
