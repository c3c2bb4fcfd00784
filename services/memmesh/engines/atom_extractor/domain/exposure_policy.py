"""Default exposure and topic words of a new atom, from its category and sensitivity."""

from __future__ import annotations

from memmesh.policy import sensitivity
from memmesh.policy.sensitivity import Exposure
from memmesh.text import plain_words

# Key segments that say nothing about what the fact is about.
_GENERIC_SEGMENTS = frozenset(
    "preference relationship identity constraint general user favorite favourite pet tool".split()
)


def sensitivity_of(key: str, text: str) -> tuple[str, Exposure] | None:
    """The most restrictive sensitive class the key or text falls in, if any (seed 001
    §2.11.11: health, finances, credentials and secrets are never SAFE_TO_SPEAK by default;
    credentials never leave the engines). The classifier is shared with the ThreadStore."""
    found = sensitivity.sensitivity_of(text, key)
    return (found.name, found.exposure) if found else None


def default_exposure(category: str, key: str, text: str) -> Exposure:
    """SAFE_TO_SPEAK unless the fact is sensitive (the category alone never makes it safer)."""
    sensitive = sensitivity_of(key, text)
    return sensitive[1] if sensitive else Exposure.SAFE_TO_SPEAK


def topics_of(key: str, text: str, critical_tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Topic words for topic-level rules: key words, names and the sensitive class, sorted."""
    words = {w for w in plain_words(key) if len(w) > 1}
    words -= _GENERIC_SEGMENTS
    words |= {token.lower() for token in critical_tokens if token.isalpha()}
    sensitive = sensitivity_of(key, text)
    if sensitive:
        words.add(sensitive[0])
    return tuple(sorted(words))
