"""The shared sensitivity classifier: credentials never SAFE_TO_SPEAK, deterministic, monotone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memmesh.policy.sensitivity import (
    CREDENTIALS,
    DIET,
    FINANCES,
    HEALTH,
    SECRET,
    Exposure,
    exposure_of,
    sensitivity_of,
    stricter,
)

CREDENTIAL_NOUNS = [
    "PIN", "bank PIN", "pin code", "password", "passcode", "wifi password", "security code",
    "door code", "alarm code", "account number", "card number", "routing number", "social security number",
    "SSN", "one-time code", "verification code", "API key", "secret key", "security answer",
    "mother's maiden name", "username", "login",
]  # fmt: skip
VALUES = st.one_of(
    st.from_regex(r"\A[0-9]{4,8}\Z"),
    st.from_regex(r"\A[A-Za-z][A-Za-z0-9!#$]{5,14}\Z"),
)
FILLER = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My bank PIN is 4921.", CREDENTIALS),
        ("The pin is 0000", CREDENTIALS),
        ("PIN 4921", CREDENTIALS),
        ("my card number is 4111 1111 1111 1111", CREDENTIALS),
        ("It's 4111-1111-1111-1111, expiry next May", CREDENTIALS),
        ("my ssn is 123-45-6789", CREDENTIALS),
        ("My password is hunter2!", CREDENTIALS),
        ("My mother's maiden name is Smith.", CREDENTIALS),
        ("I have diabetes.", HEALTH),
        ("I am a vegetarian.", DIET),
        ("User keeps kosher.", DIET),
        ("I eat gluten-free.", DIET),
        ("My blood pressure is high.", HEALTH),
        ("My salary is 90000 dollars.", FINANCES),
        ("I'll tell you a secret.", SECRET),
    ],
)
def test_sensitive_text_falls_in_its_class(text: str, expected: object) -> None:
    assert sensitivity_of(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I live in Boston.",
        "I love jazz.",
        "Pin this conversation, please.",
        "It is worth a try.",
        "Turn 4 of today.",
    ],
)
def test_ordinary_text_is_safe_to_speak(text: str) -> None:
    assert sensitivity_of(text) is None
    assert exposure_of(text) is Exposure.SAFE_TO_SPEAK


def test_a_key_counts_like_text() -> None:
    assert exposure_of("User's bank PIN is 4821.", "identity.bank_pin") is Exposure.INTERNAL_ONLY
    assert exposure_of("User's code.", "identity.door_code") is Exposure.INTERNAL_ONLY
    assert exposure_of("User has a cat.", "constraint.medical") is Exposure.SAFE_TO_TEXT


@given(
    noun=st.sampled_from(CREDENTIAL_NOUNS),
    value=VALUES,
    verb=st.sampled_from(["is", "was", ":", "="]),
    before=FILLER,
    after=FILLER,
)
def test_credential_bearing_text_is_never_safe_to_speak(
    noun: str, value: str, verb: str, before: str, after: str
) -> None:
    for owner in ("My", "my", "the", "Our"):
        text = f"{before} {owner} {noun} {verb} {value} {after}"
        assert exposure_of(text) is Exposure.INTERNAL_ONLY, text


@given(
    digits=st.from_regex(r"\A[0-9]{13,19}\Z"),
    sep=st.sampled_from(["", " ", "-"]),
    before=FILLER,
    after=FILLER,
)
def test_card_numbers_are_credentials_whatever_surrounds_them(
    digits: str, sep: str, before: str, after: str
) -> None:
    grouped = sep.join(digits[i : i + 4] for i in range(0, len(digits), 4))
    assert exposure_of(f"{before} {grouped} {after}") is Exposure.INTERNAL_ONLY


@given(first=FILLER, second=FILLER)
def test_adding_text_never_makes_it_less_strict(first: str, second: str) -> None:
    joined = exposure_of(f"{first} {second}")
    assert joined >= stricter(exposure_of(first), exposure_of(second))


@given(text=FILLER, key=st.text(max_size=30))
def test_classification_is_deterministic(text: str, key: str) -> None:
    assert sensitivity_of(text, key) == sensitivity_of(text, key)
    assert exposure_of(text, key) == exposure_of(str(text), str(key))
