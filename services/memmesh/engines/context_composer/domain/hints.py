"""The Hint Bundle (the user's vocabulary) and tone guidance (labels only, never facts)."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.context_composer.domain.model import CorrectionPair, Hints, TaggedAtom
from memmesh.engines.context_composer.domain.text import words

MAX_VOCABULARY = 50
MAX_CORRECTIONS = 20
MAX_TERM_CHARS = 64

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
) -> Hints:
    """Names and terms of the selected atoms plus what corrections meant, sorted and bounded;
    atoms to use but not say lend no term (the hints travel beside the bundle, unmarked)."""
    terms = {t.strip() for a in atoms if not a.do_not_say for t in a.atom.critical_tokens}
    terms |= {n.strip() for n in names}
    terms |= {c.meant.strip() for c in corrections}
    vocabulary = sorted(t for t in terms if t and len(t) <= MAX_TERM_CHARS)[:MAX_VOCABULARY]
    pairs = sorted({(c.heard, c.meant) for c in corrections if c.heard and c.meant})[
        :MAX_CORRECTIONS
    ]
    return Hints(language, tuple(vocabulary), tuple(CorrectionPair(h, m) for h, m in pairs))


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
