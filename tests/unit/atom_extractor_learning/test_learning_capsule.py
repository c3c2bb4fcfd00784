"""The learning capsule's pure logic: what a turn teaches, bounded merging, the hints it
lends a Brief (ordered, within the byte cap, the same every time) and envelope sealing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.common.v1 import bundle_pb2
from memmesh.device.crypto import IntegrityError
from memmesh.engines.atom_extractor.learning.envelope import Envelope
from memmesh.engines.atom_extractor.learning.profile import (
    Learned,
    LearnedPair,
    LearningCaps,
    LearningProfile,
    PairKind,
    decode,
    encode,
    hints_of,
    merge,
    without_session,
    without_terms,
)
from memmesh.engines.atom_extractor.learning.rules import learn_from_turn
from memmesh.engines.context_composer.domain.hints import MAX_HINT_BYTES, hint_bundle
from memmesh.engines.context_composer.domain.model import CorrectionPair


def test_sentence_shapes_teach_slang_pronunciation_phrasing_vendors_and_terms() -> None:
    taught = learn_from_turn(
        "When I say the yard, I mean Pellow Depot. Kubrix is pronounced koo-bricks. "
        "Please call it the studio, not the office. Our supplier is Acme Tools. "
        "Zorvex is our internal code name for the billing rewrite.",
        ("Sarah", "Sandra"),
    )
    assert [(p.said, p.meant, p.kind) for p in taught.pairs] == [
        ("the yard", "Pellow Depot", PairKind.SLANG),
        ("koo-bricks", "Kubrix", PairKind.PRONUNCIATION),
        ("the office", "the studio", PairKind.PHRASING),
        ("Sarah", "Sandra", PairKind.CORRECTION),
    ]
    assert taught.vendors == ("Acme Tools",)
    assert taught.terms == ("Zorvex",)


def test_a_plain_turn_teaches_nothing() -> None:
    assert learn_from_turn("I had a long day at work today.", None).empty
    # A name said in passing stays with the atoms (which forget it), not in the capsule.
    assert learn_from_turn("My brother Kwame is a pilot.", None).empty


def test_merge_puts_the_newest_first_replaces_a_meaning_and_stays_within_caps() -> None:
    caps = LearningCaps(max_pairs=2, max_terms=2)
    profile = LearningProfile()
    for said, meant in (("a", "alpha"), ("b", "beta"), ("c", "gamma"), ("a", "apple")):
        profile = merge(profile, Learned(pairs=(LearnedPair(said, meant, PairKind.SLANG),)), caps)
    assert [(p.said, p.meant) for p in profile.pairs] == [("a", "apple"), ("c", "gamma")]
    profile = merge(profile, Learned(terms=("Ana", "Ben", "Cleo")), caps)
    assert profile.terms == ("Cleo", "Ben")
    assert profile.version == 5
    # The same lesson again changes nothing, not even the version.
    assert merge(profile, Learned(terms=("Cleo",)), caps) == profile


def test_a_pair_that_means_itself_or_is_too_long_is_not_kept() -> None:
    caps = LearningCaps(max_entry_chars=10)
    learned = Learned(
        pairs=(
            LearnedPair("same", "Same", PairKind.SLANG),
            LearnedPair("short", "x" * 11, PairKind.SLANG),
        )
    )
    assert merge(LearningProfile(), learned, caps) == LearningProfile()


def test_hints_put_corrections_first_then_slang_and_respect_the_byte_cap() -> None:
    profile = LearningProfile(
        pairs=(
            LearnedPair("koo-bricks", "Kubrix", PairKind.PRONUNCIATION),
            LearnedPair("the yard", "Pellow Depot", PairKind.SLANG),
            LearnedPair("Sarah", "Sandra", PairKind.CORRECTION),
        ),
        vendors=("Acme Tools",),
        terms=("Priya",),
    )
    hints = hints_of(profile, ["Zephyrline"], [("zeffer line", "Zephyrline")], LearningCaps())
    assert hints.pairs == (
        ("Sarah", "Sandra"),
        ("the yard", "Pellow Depot"),
        ("koo-bricks", "Kubrix"),
        ("zeffer line", "Zephyrline"),
    )
    assert hints.vocabulary == ("Acme Tools", "Priya", "Zephyrline")
    # 60 bytes: two pairs (20 + 29 with framing) and the one term that still fits (8).
    tight = hints_of(profile, ["Zephyrline"], [], LearningCaps(hint_max_bytes=60))
    assert tight.pairs == (("Sarah", "Sandra"), ("the yard", "Pellow Depot"))
    assert tight.vocabulary == ("Priya",)


words = st.text(alphabet="abcdefgh XYZ-", min_size=1, max_size=30)
pairs = st.builds(LearnedPair, words, words, st.sampled_from(list(PairKind)))


@settings(max_examples=60, deadline=None)
@given(
    pair_list=st.lists(pairs, max_size=40),
    terms=st.lists(words, max_size=40),
    cap=st.integers(min_value=64, max_value=2048),
)
def test_hints_are_deterministic_and_fit_the_cap(
    pair_list: list[LearnedPair], terms: list[str], cap: int
) -> None:
    profile = merge(
        LearningProfile(), Learned(pairs=tuple(pair_list), terms=tuple(terms)), LearningCaps()
    )
    hints = hints_of(profile, [], [], LearningCaps(hint_max_bytes=cap))
    assert hints == hints_of(profile, [], [], LearningCaps(hint_max_bytes=cap))
    message = bundle_pb2.HintBundle(
        vocabulary=list(hints.vocabulary),
        corrections=[bundle_pb2.CorrectionPair(heard=h, meant=m) for h, m in hints.pairs],
    )
    assert message.ByteSize() <= cap
    assert decode(encode(profile)) == profile


@settings(max_examples=40, deadline=None)
@given(
    learned=st.lists(st.text(min_size=1, max_size=64), max_size=200),
    pair_list=st.lists(st.tuples(words, words), max_size=40),
)
def test_the_composed_hint_bundle_stays_within_its_byte_cap(
    learned: list[str], pair_list: list[tuple[str, str]]
) -> None:
    corrections = [CorrectionPair(h * 6, m * 6) for h, m in pair_list]
    hints = hint_bundle("en", (), corrections, (), learned)
    message = bundle_pb2.HintBundle(
        language=hints.language,
        vocabulary=list(hints.vocabulary),
        corrections=[
            bundle_pb2.CorrectionPair(heard=c.heard, meant=c.meant) for c in hints.corrections
        ],
    )
    assert message.ByteSize() <= MAX_HINT_BYTES
    assert hints == hint_bundle("en", (), corrections, (), learned)


def test_a_forget_drops_every_entry_holding_the_word() -> None:
    profile = LearningProfile(
        pairs=(LearnedPair("the yard", "Pellow Depot", PairKind.SLANG),),
        vendors=("Pellow Supplies",),
        terms=("Priya",),
        version=3,
    )
    forgotten = without_terms(profile, ["pellow"])
    assert (forgotten.pairs, forgotten.vendors, forgotten.terms) == ((), (), ("Priya",))
    assert forgotten.version == 4
    assert without_terms(profile, ["nothing"]) is profile


def test_envelope_keys_open_only_for_their_tenant_user_and_version() -> None:
    envelope = Envelope(b"a master secret of enough length")
    key, wrapped = envelope.new_data_key("t1", "u1")
    assert key not in wrapped
    assert envelope.unwrap("t1", "u1", wrapped) == key
    for tenant, user in (("t2", "u1"), ("t1", "u2")):
        with pytest.raises(IntegrityError):
            envelope.unwrap(tenant, user, wrapped)
    with pytest.raises(IntegrityError):
        Envelope(b"another master secret, as long").unwrap("t1", "u1", wrapped)
    sealed = envelope.seal(key, "t1", "u1", 2, b"Pellow Depot")
    assert b"Pellow" not in sealed
    assert envelope.open(key, "t1", "u1", 2, sealed) == b"Pellow Depot"
    with pytest.raises(IntegrityError):
        envelope.open(key, "t1", "u1", 1, sealed)


def test_a_forgotten_conversation_takes_only_what_it_taught() -> None:
    caps = LearningCaps()
    profile = merge(
        LearningProfile(),
        Learned(pairs=(LearnedPair("the yard", "Pellow Depot", PairKind.SLANG),)),
        caps,
        "s1",
    )
    profile = merge(profile, Learned(vendors=("Acme Tools",)), caps, "s2")
    profile = merge(profile, Learned(terms=("Zorvex",)), caps, "s2")
    assert dict(profile.taught_in) == {
        "s1": ("the yard", "Pellow Depot"),
        "s2": ("Acme Tools", "Zorvex"),
    }
    forgotten = without_session(profile, "s2")
    assert (forgotten.vendors, forgotten.terms) == ((), ())
    assert [p.said for p in forgotten.pairs] == ["the yard"]
    assert dict(forgotten.taught_in) == {"s1": ("the yard", "Pellow Depot")}
    assert forgotten.version > profile.version
    assert without_session(forgotten, "s2") is forgotten
    # The teachings are sealed with the profile and survive its byte form.
    assert decode(encode(profile)) == profile
    # A forget of words also clears them from the conversation it came from.
    assert dict(without_terms(profile, ["acme"]).taught_in)["s2"] == ("Zorvex",)
