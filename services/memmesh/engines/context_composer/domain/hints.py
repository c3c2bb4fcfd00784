"""The Hint Bundle (the user's vocabulary) and tone guidance (labels only, never facts)."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.context_composer.domain.model import CorrectionPair, Hints, TaggedAtom
from memmesh.engines.context_composer.domain.text import words

MAX_VOCABULARY = 50
MAX_CORRECTIONS = 20
MAX_TERM_CHARS = 64
# Serialized bytes the Hint Bundle may take (seed 001 §2.14: bounded), and the most one
# length-delimited field's tag and length can add (1-byte tag, up to 3-byte length here).
MAX_HINT_BYTES = 4096
_FRAME = 4

_URGENT = frozenset(
    {"urgent", "urgently", "asap", "quick", "quickly", "hurry", "immediately", "emergency"}
)
_DISTRESS = frozenset(
    {
        "sad",
        "anxious",
        "worried",
        "stressed",
        "upset",
        "scared",
        "afraid",
        "lonely",
        "tired",
        "overwhelmed",
    }
)
_THANKS = frozenset({"thanks", "thank", "great", "awesome", "love", "glad"})


def hint_bundle(
    language: str,
    atoms: Sequence[TaggedAtom],
    corrections: Sequence[CorrectionPair],
    names: Sequence[str] = (),
    learned: Sequence[str] = (),
) -> Hints:
    """Names and terms of the selected atoms, the learning capsule's and company pack's
    terms, plus what corrections meant, sorted and bounded by count and by bytes; atoms to
    use but not say lend no term (the hints travel beside the bundle, unmarked)."""
    terms = {t.strip() for a in atoms if not a.do_not_say for t in a.atom.critical_tokens}
    terms |= {n.strip() for n in names}
    terms |= {t.strip() for t in learned}
    terms |= {c.meant.strip() for c in corrections}
    vocabulary = sorted(t for t in terms if t and len(t) <= MAX_TERM_CHARS)[:MAX_VOCABULARY]
    pairs = sorted({(c.heard, c.meant) for c in corrections if c.heard and c.meant})[
        :MAX_CORRECTIONS
    ]
    vocabulary, pairs = _within_bytes(language, vocabulary, pairs)
    return Hints(language, tuple(vocabulary), tuple(CorrectionPair(h, m) for h, m in pairs))


def _within_bytes(
    language: str, vocabulary: list[str], pairs: list[tuple[str, str]]
) -> tuple[list[str], list[tuple[str, str]]]:
    """The longest prefixes of both lists whose serialized size stays within the cap: the
    last term goes first, then the last pair (a bound on protobuf's framing, not a guess)."""

    def size() -> int:
        return (
            len(language.encode())
            + _FRAME
            + sum(len(t.encode()) + _FRAME for t in vocabulary)
            + sum(len(h.encode()) + len(m.encode()) + 3 * _FRAME for h, m in pairs)
        )

    while size() > MAX_HINT_BYTES and (vocabulary or pairs):
        if vocabulary:
            vocabulary = vocabulary[:-1]
        else:
            pairs = pairs[:-1]
    return vocabulary, pairs


def tone_labels(query: str) -> tuple[str, ...]:
    """A few tone labels from the query's words and punctuation; never facts."""
    said = set(words(query))
    labels = set()
    if said & _URGENT:
        labels |= {"brief", "calm"}
    if said & _DISTRESS:
        labels |= {"gentle", "reassuring"}
    if said & _THANKS:
        labels.add("warm")
    if query.rstrip().endswith("?") and not labels:
        labels.add("helpful")
    return tuple(sorted(labels)) or ("neutral",)
