"""What a user turn teaches the learning capsule: a few fixed sentence shapes and the correction
pair the extraction recognised. Deterministic: the same turn always teaches the same thing, in
the order it was said.

Names of people and places are not copied here: the Hint Bundle takes them from the atoms a
Brief carries, so a name leaves the hints with its atom (forgotten, restricted, held back).
A copy kept in the capsule would outlive a forgotten conversation or a restricted fact."""

from __future__ import annotations

import re

from memmesh.engines.atom_extractor.learning.profile import Learned, LearnedPair, PairKind, clean

# A phrase: up to six words, no sentence punctuation inside.
_PHRASE = r"[\"']?([^.,;:!?\"]{1,60}?)[\"']?"
_END = r"(?=[.,;:!?]|$)"

_SLANG = (
    re.compile(rf"\bwhen i say {_PHRASE},? i (?:mean|am talking about) {_PHRASE}{_END}", re.I),
    re.compile(rf"\bby {_PHRASE},? i (?:always )?mean {_PHRASE}{_END}", re.I),
)
_PRONUNCIATION = re.compile(rf"\b([A-Z][\w-]{{1,40}}) is pronounced (?:like )?{_PHRASE}{_END}")
# "call it X, not Y" / "say X instead of Y": the user's preferred phrasing (meant first).
_PHRASING = (
    re.compile(rf"\b(?:please )?call (?:it|them|him|her) {_PHRASE},? not {_PHRASE}{_END}", re.I),
    re.compile(rf"\bsay {_PHRASE} instead of {_PHRASE}{_END}", re.I),
)
_NAME = r"([A-Z][\w&'-]*(?: [A-Z][\w&'-]*){0,3})"
# The lead-in in any case, the name capitalised.
_VENDOR = re.compile(
    r"(?i:\b(?:our|my) (?:vendor|supplier|provider|distributor|contractor)s? (?:is|are) )" + _NAME
)
_VENDOR_VERB = re.compile(r"(?i:\bwe (?:buy|order|source) (?:[a-z]+ )?from )" + _NAME)
_TERM = re.compile(
    r"\b([A-Z][\w-]{1,40}) (?:is|means) (?:our|the) (?:internal |team |project )?"
    r"(?:term|word|name|code ?name|acronym|abbreviation) for\b"
)
_MAX_WORDS = 6


def _phrase(text: str) -> str:
    words = clean(text).split()
    return " ".join(words) if 0 < len(words) <= _MAX_WORDS else ""


def _pairs(text: str) -> list[LearnedPair]:
    found: list[tuple[int, LearnedPair]] = []
    for pattern in _SLANG:
        for m in pattern.finditer(text):
            found.append((m.start(), LearnedPair(_phrase(m[1]), _phrase(m[2]), PairKind.SLANG)))
    for m in _PRONUNCIATION.finditer(text):
        # STT hears the sound and should write the term.
        found.append((m.start(), LearnedPair(_phrase(m[2]), _phrase(m[1]), PairKind.PRONUNCIATION)))
    for pattern in _PHRASING:
        for m in pattern.finditer(text):
            found.append((m.start(), LearnedPair(_phrase(m[2]), _phrase(m[1]), PairKind.PHRASING)))
    found.sort(key=lambda item: item[0])
    return [pair for _, pair in found if pair.said and pair.meant]


def learn_from_turn(text: str, correction: tuple[str, str] | None) -> Learned:
    """What a user turn teaches: its sentence shapes and the correction pair (heard, meant)
    the extraction recognised."""
    pairs = _pairs(text)
    if correction is not None:
        pairs.append(LearnedPair(correction[0], correction[1], PairKind.CORRECTION))
    vendors = [clean(m[1]) for p in (_VENDOR, _VENDOR_VERB) for m in p.finditer(text)]
    terms = [clean(m[1]) for m in _TERM.finditer(text)]
    return Learned(tuple(pairs), tuple(vendors), tuple(terms))
