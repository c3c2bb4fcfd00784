"""What leaves the mesh for a model provider: the turn with credentials and INTERNAL_ONLY
spans replaced by placeholders (seed 001 §2.11.5: credentials never leave the engines).

Two passes, both deterministic:

1. Sentences the sensitivity classifier puts in INTERNAL_ONLY (a password, a PIN, a door
   code, an account number...) are replaced whole: the value may sit anywhere in them
   ("the code for the garage is the year my dad was born").
2. In what remains, values that are credentials whatever words surround them: card
   numbers, IBAN-like account ids, SSN-like ids, API keys and long random tokens, and a
   value right after a credential word ("pin 4921", "password: hunter2").

The placeholders name the kind (`[REDACTED:card_number]`), so the model still sees that
something was said, and a fact built on a placeholder never passes the extraction gates
(its critical tokens are not in the user's words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memmesh.policy.sensitivity import Exposure, exposure_of

PLACEHOLDER = "[REDACTED:{kind}]"

# Sentence ends: . ! ? ; followed by space or the end (decimals and versions stay whole),
# or a line break.
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n")


def _sentences(text: str) -> list[str]:
    """`text` cut after each sentence end; joined back, the pieces are `text` exactly."""
    pieces, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        pieces.append(text[start : end.end()])
        start = end.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


_VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Provider keys with a known shape, before the generic token rule.
    (
        "api_key",
        re.compile(
            r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{20,}"
            r"|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{30,}"
            r"|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
        ),
    ),
    # IBAN: country, check digits, 11 to 30 alphanumerics, in groups of four or not.
    ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]){11,30}\b", re.IGNORECASE)),
    # Card numbers: 13 to 19 digits, spaced or dashed in any grouping.
    ("card_number", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")),
    ("national_id", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    # A long token mixing letters and digits (secrets, recovery codes, session tokens).
    (
        "secret_token",
        re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}\b"),
    ),
)

# A credential word, an optional verb or colon, and the value after it.
_CREDENTIAL_WORDS = (
    r"pass(?:word|code|phrase|wd)?|pins?|pin\s+(?:code|number)|cvv|cvc|otp|one[- ]time\s+code"
    r"|(?:security|verification|access|door|gate|alarm|garage|lock|entry|unlock|backup|recovery)"
    r"\s+(?:code|key|phrase)|api\s+key|secret\s+key|private\s+key|access\s+token|token"
    r"|account\s+number|card\s+number|routing\s+number|sort\s+code|passport\s+number|login"
    r"|username|(?:wi-?fi|wireless|network|licen[cs]e|product)\s+(?:key|password)|key"
)
_CREDENTIAL_VALUE = re.compile(
    rf"\b(?P<word>{_CREDENTIAL_WORDS})\b(?P<link>\s*(?:is|was|are|were|=|:)?\s*)"
    r"(?P<value>(?=\S*[\d!@#$%^&*_])[^\s,.;!?]+(?:[.][^\s,.;!?]+)*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Redacted:
    """The text to send and what was taken out of it (kinds only, never the values)."""

    text: str
    kinds: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def redact(text: str) -> Redacted:
    """`text` with INTERNAL_ONLY sentences and credential values replaced by placeholders."""
    kinds: list[str] = []
    sentences: list[str] = []
    for sentence in _sentences(text):
        if sentence.strip() and exposure_of(sentence) is Exposure.INTERNAL_ONLY:
            kinds.append("credentials")
            trailing = sentence[len(sentence.rstrip()) :]
            leading = sentence[: len(sentence) - len(sentence.lstrip())]
            sentences.append(f"{leading}{PLACEHOLDER.format(kind='credentials')}{trailing}")
        else:
            sentences.append(sentence)
    out = "".join(sentences)

    def credential(match: re.Match[str]) -> str:
        kinds.append("credentials")
        return f"{match.group('word')}{match.group('link')}{PLACEHOLDER.format(kind='credentials')}"

    out = _CREDENTIAL_VALUE.sub(credential, out)
    for kind, pattern in _VALUE_PATTERNS:

        def replace(match: re.Match[str], kind: str = kind) -> str:
            if match.group().startswith("[REDACTED"):
                return match.group()
            kinds.append(kind)
            return PLACEHOLDER.format(kind=kind)

        out = pattern.sub(replace, out)
    return Redacted(out, tuple(dict.fromkeys(kinds)))


def only_placeholders(text: str) -> bool:
    """Whether nothing but placeholders and punctuation is left to send."""
    rest = re.sub(r"\[REDACTED:[a-z_]+\]", " ", text)
    return not re.search(r"[A-Za-z0-9]", rest)
