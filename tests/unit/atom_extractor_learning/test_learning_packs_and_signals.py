"""Company packs refuse identity documents and unpermitted private names naming the entry;
global signals keep only generic pairs and release them at k contributors."""

from __future__ import annotations

import pytest

from memmesh.engines.atom_extractor.learning.global_signals import (
    Released,
    Signal,
    contributor_of,
    generic_signals,
    releasable,
)
from memmesh.engines.atom_extractor.learning.profile import LearnedPair, PairKind
from memmesh.engines.atom_extractor.learning.vocabulary_pack import (
    EntryKind,
    PackEntry,
    canonical,
    pack_hints,
    refusal_of,
    sha256_of,
)

CLEAN = [PackEntry("FlexiPlan", EntryKind.PRODUCT), PackEntry("shift lead", EntryKind.ROLE)]


@pytest.mark.parametrize(
    "bad",
    [
        PackEntry("passport scan", EntryKind.TERM),
        PackEntry("SSN 123-45-6789", EntryKind.TERM),
        PackEntry("X1234567", EntryKind.PRODUCT),
        PackEntry("4111 1111 1111 1111", EntryKind.TERM),
        PackEntry("ana@example.com", EntryKind.TERM),
        PackEntry("FlexiPlan", EntryKind.PRODUCT, sounds_like="driver's license"),
    ],
)
def test_identity_documents_and_numbers_are_refused_naming_the_entry(bad: PackEntry) -> None:
    refusal = refusal_of([*CLEAN, bad], private_names_allowed=True)
    assert refusal is not None and refusal.index == 2
    assert refusal.field == ("sounds_like" if bad.sounds_like else "term")


@pytest.mark.parametrize(
    "name",
    [PackEntry("Maria Lopez", EntryKind.PERSON_NAME), PackEntry("Dr Okafor", EntryKind.ROLE)],
)
def test_private_names_need_the_tenants_permission(name: PackEntry) -> None:
    refusal = refusal_of([name], private_names_allowed=False)
    assert refusal is not None and refusal.index == 0
    assert refusal_of([name], private_names_allowed=True) is None


def test_a_clean_pack_passes_and_its_form_ignores_entry_order() -> None:
    assert refusal_of(CLEAN, private_names_allowed=False) is None
    assert sha256_of(canonical(CLEAN)) == sha256_of(canonical(list(reversed(CLEAN))))
    terms, pairs = pack_hints([*CLEAN, PackEntry("Quorra", EntryKind.PRODUCT, "kora")])
    assert terms == ["FlexiPlan", "Quorra", "shift lead"]
    assert pairs == [("kora", "Quorra")]


def test_only_generic_pairs_become_signals() -> None:
    pairs = [
        LearnedPair("grub", "food", PairKind.SLANG),
        LearnedPair("the shed", "Pellow Depot", PairKind.SLANG),  # a capital marks a name
        LearnedPair("room 12", "office", PairKind.SLANG),  # digits identify
        LearnedPair("koo-bricks", "kubrix", PairKind.PRONUNCIATION),  # not a contributed kind
        LearnedPair("mo", "maria", PairKind.CORRECTION),  # the user's own name
    ]
    assert generic_signals(pairs, ["Maria"]) == [Signal("SLANG", "grub", "food")]


def test_signals_below_k_are_never_released_and_the_rest_come_most_contributed_first() -> None:
    counts = [
        Released(Signal("SLANG", "a", "b"), 4),
        Released(Signal("SLANG", "c", "d"), 9),
        Released(Signal("SLANG", "e", "f"), 2),
    ]
    assert [r.signal.heard for r in releasable(counts, 4)] == ["c", "a"]
    assert releasable(counts, 10) == []


def test_contributors_are_keyed_pseudonyms() -> None:
    one = contributor_of(b"secret", "t", "u")
    assert one == contributor_of(b"secret", "t", "u")
    assert one != contributor_of(b"other", "t", "u")
    assert len(one) == 64
