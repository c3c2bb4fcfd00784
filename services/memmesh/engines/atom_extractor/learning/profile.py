"""The per-user learning capsule (seed 001 §2.4.1): a bounded language profile and vocabulary,
as plain data with a canonical byte form. Non-authoritative: nothing here grants anything."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace


class PairKind(enum.StrEnum):
    """What a learned heard -> meant pair is."""

    CORRECTION = "CORRECTION"
    SLANG = "SLANG"
    PRONUNCIATION = "PRONUNCIATION"
    PHRASING = "PHRASING"


# Conversations whose teachings the capsule remembers (the newest), so forgetting one of
# them takes what it taught.
MAX_TAUGHT_SESSIONS = 200

# Hints go to speech recognition in this order: what the user corrected first.
PAIR_ORDER = (PairKind.CORRECTION, PairKind.SLANG, PairKind.PRONUNCIATION, PairKind.PHRASING)


@dataclass(frozen=True)
class LearningCaps:
    """Bounds of one capsule and of the hints it lends a Brief."""

    max_pairs: int = 100
    max_vendors: int = 50
    max_terms: int = 100
    max_entry_chars: int = 64
    hint_max_bytes: int = 4096


@dataclass(frozen=True)
class LearnedPair:
    said: str
    meant: str
    kind: PairKind


@dataclass(frozen=True)
class LearningProfile:
    """Newest first in every list; `version` counts changes."""

    pairs: tuple[LearnedPair, ...] = ()
    vendors: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    version: int = 0
    # (session id, the words it taught), oldest first: sealed with the rest, never served.
    taught_in: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.pairs or self.vendors or self.terms)


@dataclass(frozen=True)
class Learned:
    """What one turn taught: pairs and vocabulary, in the order they were said."""

    pairs: tuple[LearnedPair, ...] = ()
    vendors: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.pairs or self.vendors or self.terms)


def clean(text: str) -> str:
    """One line, single spaces, no surrounding quotes or punctuation."""
    return " ".join(text.split()).strip(" \"'.,;:!?")


def _front(
    existing: Iterable[str], new: Iterable[str], cap: int, max_chars: int
) -> tuple[str, ...]:
    """New entries first (a re-learned one moves up), case-insensitively unique, capped."""
    merged: list[str] = []
    seen: set[str] = set()
    for entry in [*reversed(list(new)), *existing]:
        entry = clean(entry)
        if not entry or len(entry) > max_chars or entry.lower() in seen:
            continue
        seen.add(entry.lower())
        merged.append(entry)
    return tuple(merged[:cap])


def _taught_words(learned: Learned) -> tuple[str, ...]:
    words = [clean(w) for p in learned.pairs for w in (p.said, p.meant)]
    words += [clean(w) for w in (*learned.vendors, *learned.terms)]
    return tuple(w for w in words if w)


def _taught_in(
    profile: LearningProfile, learned: Learned, session_id: str
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The conversations' teachings with this one's added (moved last), the oldest dropped."""
    if not session_id:
        return profile.taught_in
    before = dict(profile.taught_in)
    words = tuple(dict.fromkeys((*before.pop(session_id, ()), *_taught_words(learned))))
    return (*before.items(), (session_id, words))[-MAX_TAUGHT_SESSIONS:]


def merge(
    profile: LearningProfile, learned: Learned, caps: LearningCaps, session_id: str = ""
) -> LearningProfile:
    """The profile with what a turn taught in front; the oldest entries fall off at the caps.
    A pair replaces an earlier one of the same kind and said words (the newest meaning wins).
    The words are also kept under the turn's conversation, so forgetting it takes them."""
    if learned.empty:
        return profile
    pairs: list[LearnedPair] = []
    seen: set[tuple[PairKind, str]] = set()
    for pair in [*reversed(learned.pairs), *profile.pairs]:
        said, meant = clean(pair.said), clean(pair.meant)
        key = (pair.kind, said.lower())
        too_long = max(len(said), len(meant)) > caps.max_entry_chars
        if not said or not meant or said.lower() == meant.lower() or too_long or key in seen:
            continue
        seen.add(key)
        pairs.append(LearnedPair(said, meant, pair.kind))
    updated = LearningProfile(
        pairs=tuple(pairs[: caps.max_pairs]),
        vendors=_front(profile.vendors, learned.vendors, caps.max_vendors, caps.max_entry_chars),
        terms=_front(profile.terms, learned.terms, caps.max_terms, caps.max_entry_chars),
        version=profile.version,
        taught_in=_taught_in(profile, learned, session_id),
    )
    if replace(updated, version=0) == replace(profile, version=0):
        return profile
    return replace(updated, version=profile.version + 1)


def encode(profile: LearningProfile) -> bytes:
    """Canonical JSON (sorted keys, no spaces): the plaintext that gets sealed."""
    body = {
        "pairs": [[p.said, p.meant, p.kind.value] for p in profile.pairs],
        "vendors": list(profile.vendors),
        "terms": list(profile.terms),
        "taught_in": [[sid, list(words)] for sid, words in profile.taught_in],
        "version": profile.version,
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def decode(raw: bytes) -> LearningProfile:
    body = json.loads(raw)
    return LearningProfile(
        pairs=tuple(LearnedPair(s, m, PairKind(k)) for s, m, k in body["pairs"]),
        vendors=tuple(body["vendors"]),
        terms=tuple(body["terms"]),
        version=int(body["version"]),
        taught_in=tuple((str(sid), tuple(words)) for sid, words in body.get("taught_in", [])),
    )


@dataclass(frozen=True)
class Hints:
    """What a Brief's Hint Bundle gets from the learning stores, ordered and within the cap."""

    vocabulary: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = field(default_factory=tuple)


# Protobuf framing of one repeated string or one pair: tag and length bytes, a bound.
_STRING_FRAME = 3
_PAIR_FRAME = 9


def hints_of(
    profile: LearningProfile,
    company_terms: Iterable[str],
    company_pairs: Iterable[tuple[str, str]],
    caps: LearningCaps,
) -> Hints:
    """The user's pairs (corrections, slang, pronunciations, phrasing) then the company's, and
    the user's vendors and terms then the company's terms; each list in that order
    until the byte cap, pairs first (they change what is heard). Same input, same hints."""
    ordered_pairs = [
        (p.said, p.meant) for kind in PAIR_ORDER for p in profile.pairs if p.kind is kind
    ]
    ordered_pairs += list(company_pairs)
    ordered_terms = [*profile.vendors, *profile.terms, *company_terms]
    budget = caps.hint_max_bytes
    pairs: list[tuple[str, str]] = []
    seen_pairs: set[tuple[str, str]] = set()
    for said, meant in ordered_pairs:
        size = len(said.encode()) + len(meant.encode()) + _PAIR_FRAME
        key = (said.lower(), meant.lower())
        if key in seen_pairs or size > budget:
            continue
        seen_pairs.add(key)
        pairs.append((said, meant))
        budget -= size
    vocabulary: list[str] = []
    seen_terms: set[str] = set()
    for term in ordered_terms:
        size = len(term.encode()) + _STRING_FRAME
        if term.lower() in seen_terms or size > budget:
            continue
        seen_terms.add(term.lower())
        vocabulary.append(term)
        budget -= size
    return Hints(tuple(vocabulary), tuple(pairs))


def without_terms(profile: LearningProfile, terms: Iterable[str]) -> LearningProfile:
    """The profile without every entry that holds a forgotten word (a forget reaches the
    capsule like every other copy)."""
    forgotten = [t.lower() for t in terms if t.strip()]
    if not forgotten:
        return profile

    def holds(text: str) -> bool:
        lowered = text.lower()
        return any(term in lowered for term in forgotten)

    kept = LearningProfile(
        pairs=tuple(p for p in profile.pairs if not (holds(p.said) or holds(p.meant))),
        vendors=tuple(v for v in profile.vendors if not holds(v)),
        terms=tuple(t for t in profile.terms if not holds(t)),
        version=profile.version,
        taught_in=tuple(
            (sid, tuple(w for w in words if not holds(w))) for sid, words in profile.taught_in
        ),
    )
    return profile if kept == profile else replace(kept, version=profile.version + 1)


def without_session(profile: LearningProfile, session_id: str) -> LearningProfile:
    """The profile without what a forgotten conversation taught (every entry holding one of
    its words, as a forget of those words would drop)."""
    taught = dict(profile.taught_in)
    if session_id not in taught:
        return profile
    words = taught.pop(session_id)
    rest = replace(profile, taught_in=tuple(taught.items()))
    forgotten = without_terms(rest, words)
    # One change, one version step, whether or not its words were still held.
    return forgotten if forgotten is not rest else replace(rest, version=profile.version + 1)
