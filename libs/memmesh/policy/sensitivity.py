"""How far a piece of memory text may travel (seed 001 §2.11.5, §2.11.11, §2.14).

One classifier for atoms (key and text) and for transcript turns: credentials never leave
the engines (INTERNAL_ONLY); health, diets, finances and secrets are written, never spoken
by default (SAFE_TO_TEXT: on a voice channel they are used, not said); everything else is
SAFE_TO_SPEAK. A diet counts because it so often says something about health or faith
(gluten free, kosher, halal) that the assistant should not announce it aloud. Pure and deterministic; the
stricter class always wins, and adding text to a text never makes it less strict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from memmesh.text import plain_words


class Exposure(IntEnum):
    """Exposure levels, stricter is larger (numbers equal common.v1.Exposure's)."""

    SAFE_TO_SPEAK = 1
    SAFE_TO_TEXT = 2
    INTERNAL_ONLY = 3


@dataclass(frozen=True)
class Sensitivity:
    """A sensitive class: its name (also a topic word for topic rules) and its exposure."""

    name: str
    exposure: Exposure


CREDENTIALS = Sensitivity("credentials", Exposure.INTERNAL_ONLY)
HEALTH = Sensitivity("health", Exposure.SAFE_TO_TEXT)
DIET = Sensitivity("diet", Exposure.SAFE_TO_TEXT)
FINANCES = Sensitivity("finances", Exposure.SAFE_TO_TEXT)
SECRET = Sensitivity("secret", Exposure.SAFE_TO_TEXT)

# Terms match whole words of the normalised text (lowercase ASCII words joined by one
# space), each also in its plural with a trailing "s".
_CREDENTIAL_TERMS = (
    "password passcode passphrase passwd login username credential ssn otp token apikey cvv cvc iban"
).split() + [
    "api key", "secret key", "private key", "access key", "access token", "recovery key",
    "recovery phrase", "seed phrase", "security code", "security question", "security answer",
    "social security", "maiden name", "one time code", "one time password", "verification code",
    "confirmation code", "authentication code", "backup code", "recovery code", "door code",
    "gate code", "alarm code", "garage code", "lock code", "entry code", "access code",
    "unlock code", "safe combination", "lock combination", "account number", "card number",
    "routing number", "sort code", "passport number",
]  # fmt: skip
_HEALTH_TERMS = (
    "health medical medication medicine diagnosis diagnosed diabetes diabetic asthma cancer allergy "
    "allergic allergies therapy therapist depression anxiety adhd autism autistic pregnant pregnancy "
    "surgery disease disorder illness condition insulin epilepsy migraine hiv deaf blind disability "
    "prescription"
).split() + ["blood pressure", "blood sugar", "blood test"]
_DIET_TERMS = (
    "diet diets dietary vegetarian vegan pescatarian pescetarian kosher halal celiac coeliac "
    "lactose keto paleo"
).split() + ["gluten free", "dairy free", "nut free"]
_FINANCE_TERMS = (
    "salary income debt loan mortgage bank banking account credit card savings money finances "
    "financial budget rent tax taxes invoice payment wage bankrupt"
).split() + ["net worth"]
_SECRET_TERMS = "secret confidential private affair".split()

# "PIN" is a credential as a noun ("my PIN", "the pin is", "PIN 4921"), not as the verb
# ("pin this thread").
_PIN_NOUN = re.compile(
    r"\b(?:my|your|his|her|our|their|the|a|new|old|bank|card|debit|credit|atm|phone|sim|account"
    r"|secret|security|digit)\s+pins?\b|\bpins?\s+(?:code|codes|number|numbers|is|was|are|were|\d)"
)
# Values that are credentials whatever words surround them: SSN-like ids and card numbers.
_SECRET_VALUES = re.compile(r"\b\d{3}-\d{2}-\d{4}\b|\b\d(?:[ -]?\d){12,18}\b")


def _terms(terms: Iterable[str]) -> re.Pattern[str]:
    # Longest first, so a phrase wins over a word it starts with.
    ordered = sorted(set(terms), key=lambda term: (-len(term), term))
    return re.compile(r"\b(?:" + "|".join(re.escape(term) for term in ordered) + r")s?\b")


_CLASSES: tuple[tuple[Sensitivity, re.Pattern[str]], ...] = (
    (CREDENTIALS, _terms(_CREDENTIAL_TERMS)),
    (HEALTH, _terms(_HEALTH_TERMS)),
    (DIET, _terms(_DIET_TERMS)),
    (FINANCES, _terms(_FINANCE_TERMS)),
    (SECRET, _terms(_SECRET_TERMS)),
)


def normalised(text: str) -> str:
    """Lowercase ASCII words joined by one space ("identity.bank_pin" -> "identity bank pin")."""
    return " ".join(plain_words(text))


def sensitivity_of(text: str, key: str = "") -> Sensitivity | None:
    """The most restrictive sensitive class the key or text falls in, if any."""
    words = normalised(f"{key} {text}")
    if _PIN_NOUN.search(words) or _SECRET_VALUES.search(text) or _CLASSES[0][1].search(words):
        return CREDENTIALS
    for sensitivity, pattern in _CLASSES[1:]:
        if pattern.search(words):
            return sensitivity
    return None


def exposure_of(text: str, key: str = "") -> Exposure:
    """SAFE_TO_SPEAK unless the key or text is sensitive."""
    found = sensitivity_of(text, key)
    return found.exposure if found else Exposure.SAFE_TO_SPEAK


def stricter(*exposures: Exposure) -> Exposure:
    """The strictest of the levels given."""
    return max(exposures, default=Exposure.SAFE_TO_SPEAK)
