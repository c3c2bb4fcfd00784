"""Freshness windows and default exposure: pure functions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memmesh.engines.atom_extractor.domain.capsule import AtomRecord, AtomStatus, Provenance
from memmesh.engines.atom_extractor.domain.exposure_policy import default_exposure, topics_of
from memmesh.engines.atom_extractor.domain.freshness import (
    MICROS_PER_DAY,
    FreshnessWindows,
    is_stale,
)
from memmesh.extraction.model import FactType
from memmesh.policy.sensitivity import Exposure

NOW = 1_767_225_600_000_000


def atom(kind: FactType, created: int, confirmed: int = 0, used: int = 0) -> AtomRecord:
    return AtomRecord(
        "atm_1",
        "preference.tea",
        "User likes tea.",
        "preference",
        kind,
        Provenance.USER_STATED,
        9000,
        Exposure.SAFE_TO_SPEAK,
        False,
        False,
        (),
        created,
        confirmed,
        used,
        0,
        1,
        (),
        AtomStatus.ACTIVE,
        "",
        ("tea",),
    )


@pytest.mark.parametrize(
    ("kind", "days"),
    [(FactType.USER_FACT, 30), (FactType.USER_PATTERN, 14), (FactType.SHARED_NARRATIVE, 7)],
)
def test_atoms_go_stale_after_their_type_window(kind: FactType, days: int) -> None:
    windows = FreshnessWindows()
    created = NOW - days * MICROS_PER_DAY
    assert not is_stale(atom(kind, created), NOW, windows)
    assert is_stale(atom(kind, created - 1), NOW, windows)


def test_a_confirmation_or_a_use_restarts_the_window_and_pinned_atoms_never_go_stale() -> None:
    old = NOW - 90 * MICROS_PER_DAY
    windows = FreshnessWindows()
    assert not is_stale(atom(FactType.USER_FACT, old, confirmed=NOW - MICROS_PER_DAY), NOW, windows)
    assert not is_stale(atom(FactType.USER_FACT, old, used=NOW - MICROS_PER_DAY), NOW, windows)
    assert not is_stale(replace(atom(FactType.USER_FACT, old), pinned=True), NOW, windows)


def test_windows_are_configurable() -> None:
    created = NOW - 3 * MICROS_PER_DAY
    assert is_stale(atom(FactType.USER_FACT, created), NOW, FreshnessWindows(user_fact_days=2))


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ("preference.tea", "User prefers tea over coffee.", Exposure.SAFE_TO_SPEAK),
        ("constraint.medical.diabete", "User has diabetes.", Exposure.SAFE_TO_TEXT),
        ("identity.salary", "User's salary is 90000 dollars.", Exposure.SAFE_TO_TEXT),
        ("identity.bank_pin", "User's bank PIN is 4821.", Exposure.INTERNAL_ONLY),
        ("relationship.friend.sam", "User's friend Sam told a secret.", Exposure.SAFE_TO_TEXT),
    ],
)
def test_sensitive_facts_are_never_safe_to_speak_by_default(
    key: str, text: str, expected: Exposure
) -> None:
    assert default_exposure("identity", key, text) is expected


def test_topics_come_from_key_words_names_and_sensitive_class() -> None:
    assert topics_of("relationship.sister.sarah", "User has a sister named Sarah.", ("Sarah",)) == (
        "sarah",
        "sister",
    )
    assert "health" in topics_of("constraint.medical.diabete", "User has diabetes.", ())
