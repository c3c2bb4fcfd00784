"""Seed 001 §2.11.10 tagging: CONFIRMED, TENTATIVE, STALE or CONFLICT, Current State first."""

from __future__ import annotations

import re

from memmesh.engines.context_composer.domain.model import (
    CONFIRMED,
    CONFLICT,
    STALE,
    TENTATIVE,
    MemoryAtom,
    UserFacts,
)
from memmesh.lexicon.languages import language_code_in

DAY_US = 86_400 * 1_000_000

# Freshness windows per atom type (seed 001 §2.17 Q13: "freshness windows per atom kind").
FRESHNESS_WINDOW_US = {
    "USER_FACT": 30 * DAY_US,
    "USER_PATTERN": 14 * DAY_US,
    "SHARED_NARRATIVE": 7 * DAY_US,
}

# Below these an atom is uncertain (seed 002 gates: facts and patterns 0.80; narratives
# are stored from 0.60 but are only trusted from 0.70).
CONFIDENCE_THRESHOLD_BP = {
    "USER_FACT": 8000,
    "USER_PATTERN": 8000,
    "SHARED_NARRATIVE": 7000,
}

_WORD = re.compile(r"[a-z]+")
_TEXT_WORDS = frozenset(
    {"text", "texts", "texting", "write", "writing", "message", "messages", "email", "chat"}
)
_SPEAK_WORDS = frozenset({"speak", "call", "calls", "voice", "talk", "phone"})


def is_stale(atom: MemoryAtom, now_us: int) -> bool:
    """Past the type's freshness window, counted from the latest confirmation, use or creation
    (§2.11.10: stale when not confirmed or used within the window)."""
    if atom.pinned:
        return False
    window = FRESHNESS_WINDOW_US.get(atom.type, FRESHNESS_WINDOW_US["USER_FACT"])
    anchor = max(atom.confirm_us, atom.last_use_us, atom.create_us)
    return anchor > 0 and now_us - anchor > window


def is_low_confidence(atom: MemoryAtom) -> bool:
    """Below the type's confidence threshold, or only inferred."""
    threshold = CONFIDENCE_THRESHOLD_BP.get(atom.type, CONFIDENCE_THRESHOLD_BP["USER_FACT"])
    return atom.confidence_bp < threshold or atom.provenance == "INFERRED"


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def agrees_with_current_state(atom: MemoryAtom, facts: UserFacts) -> bool | None:
    """Whether the atom agrees with the Current State fact on its topic; None when
    Current State holds no fact on it (Current State is the authority when it does)."""
    key = atom.key
    if key == "identity.name" and facts.display_name:
        stated = " ".join(atom.critical_tokens) or atom.text
        return facts.display_name.lower() in stated.lower()
    if (
        key.startswith(("identity.language.native", "preference.language"))
        and facts.primary_language
    ):
        language = language_code_in(atom.text)
        return (
            None if language is None else language == facts.primary_language.split("-")[0].lower()
        )
    if key.startswith("preference.contact") and facts.contact_preference:
        words = _words(atom.text)
        says_text, says_speak = bool(words & _TEXT_WORDS), bool(words & _SPEAK_WORDS)
        if says_text == says_speak:
            return None
        return ("TEXT" if says_text else "SPEAK") == facts.contact_preference
    if key.startswith(("identity.timezone", "preference.timezone")) and facts.timezone:
        return facts.timezone.lower() in atom.text.lower()
    return None


def tag_atom(atom: MemoryAtom, facts: UserFacts, now_us: int) -> str:
    """The atom's tag: conflicts first (Current State wins), then staleness, then uncertainty.

    An atom Current State confirms is CONFIRMED: the authority has settled it.
    """
    if atom.status == "CONFLICT":
        return CONFLICT
    verdict = agrees_with_current_state(atom, facts)
    if verdict is not None:
        return CONFIRMED if verdict else CONFLICT
    if is_stale(atom, now_us):
        return STALE
    if is_low_confidence(atom):
        return TENTATIVE
    return CONFIRMED
