"""Default exposure and topic words of a new atom, from its category and sensitivity."""

from __future__ import annotations

import re

from memmesh.engines.atom_extractor.capsule import Exposure

# seed 001 §2.11.11 and issue item 6: health, finances, credentials and third-party
# secrets are never SAFE_TO_SPEAK by default; credentials never leave the engines.
_SENSITIVE_WORDS: tuple[tuple[str, Exposure, frozenset[str]], ...] = (
    (
        "credentials",
        Exposure.INTERNAL_ONLY,
        frozenset(
            "password passwords passcode passcodes pin pins login logins username credential credentials "
            "ssn otp token tokens apikey api_key secret_key".split()
        ),
    ),
    (
        "health",
        Exposure.SAFE_TO_TEXT,
        frozenset(
            "health medical medication medications medicine diagnosis diagnosed diabetes diabetic asthma "
            "cancer allergy allergic allergies therapy therapist depression anxiety adhd autism autistic "
            "pregnant pregnancy surgery disease disorder illness condition insulin blood pressure "
            "epilepsy migraine migraines hiv deaf blind disability prescription".split()
        ),
    ),
    (
        "finances",
        Exposure.SAFE_TO_TEXT,
        frozenset(
            "salary income debt debts loan loans mortgage bank banking account credit card cards "
            "savings money finances financial budget rent tax taxes invoice payment payments "
            "net worth wage wages bankrupt".split()
        ),
    ),
    (
        "secret",
        Exposure.SAFE_TO_TEXT,
        frozenset("secret secrets confidential private affair".split()),
    ),
)
# Key segments that say nothing about what the fact is about.
_GENERIC_SEGMENTS = frozenset(
    "preference relationship identity constraint general user favorite favourite pet tool".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def sensitivity_of(key: str, text: str) -> tuple[str, Exposure] | None:
    """The most restrictive sensitive class the key or text falls in, if any."""
    words = set(_WORD.findall(f"{key.replace('.', ' ').replace('_', ' ')} {text}".lower()))
    for name, exposure, vocabulary in _SENSITIVE_WORDS:
        if words & vocabulary:
            return name, exposure
    return None


def default_exposure(category: str, key: str, text: str) -> Exposure:
    """SAFE_TO_SPEAK unless the fact is sensitive (the category alone never makes it safer)."""
    sensitive = sensitivity_of(key, text)
    return sensitive[1] if sensitive else Exposure.SAFE_TO_SPEAK


def topics_of(key: str, text: str, critical_tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Topic words for topic-level rules: key words, names and the sensitive class, sorted."""
    words = {
        w for w in _WORD.findall(key.replace(".", " ").replace("_", " ").lower()) if len(w) > 1
    }
    words -= _GENERIC_SEGMENTS
    words |= {token.lower() for token in critical_tokens if token.isalpha()}
    sensitive = sensitivity_of(key, text)
    if sensitive:
        words.add(sensitive[0])
    return tuple(sorted(words))
