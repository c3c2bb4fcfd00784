"""The hash chain and the append plan, without storage."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memmesh.engines.ledger.domain.chain import (
    GENESIS_HASH,
    Attribute,
    Existing,
    NewEvent,
    StoredEvent,
    plan_append,
    seal,
    verify,
)
from memmesh.runtime.errors import Conflict


def event(key: str, reason: str = "USER_STATED", atom: str = "a1") -> NewEvent:
    return NewEvent(
        key, "ATOM_CREATED", reason, (Attribute("atom_id", "s", atom),), 1_700_000_000_000_000
    )


def chain_of(n: int) -> list[StoredEvent]:
    plan = plan_append("t", "u", 0, GENESIS_HASH, [event(f"k{i}") for i in range(n)], {})
    return list(plan.inserts)


def test_plan_numbers_events_from_one_and_links_each_to_the_previous_hash() -> None:
    events = chain_of(3)
    assert [e.sequence for e in events] == [1, 2, 3]
    assert events[0].previous_hash == GENESIS_HASH
    assert events[1].previous_hash == events[0].hash
    assert events[2].previous_hash == events[1].hash


def test_seal_depends_on_tenant_user_sequence_content_and_previous_hash() -> None:
    base = seal("t", "u", 1, event("k"), GENESIS_HASH)
    assert base == seal("t", "u", 1, event("k"), GENESIS_HASH)
    assert base != seal("t2", "u", 1, event("k"), GENESIS_HASH)
    assert base != seal("t", "u2", 1, event("k"), GENESIS_HASH)
    assert base != seal("t", "u", 2, event("k"), GENESIS_HASH)
    assert base != seal("t", "u", 1, event("k", reason="OTHER"), GENESIS_HASH)
    assert base != seal("t", "u", 1, event("k"), bytes([1]) * 32)


def test_verify_accepts_an_intact_chain() -> None:
    report = verify("t", "u", chain_of(5))
    assert report.intact and report.event_count == 5 and report.first_broken_sequence == 0


def test_verify_names_the_first_tampered_sequence() -> None:
    events = chain_of(5)
    tampered = replace(events[2], event=event("k2", atom="someone-else"))
    report = verify("t", "u", [*events[:2], tampered, *events[3:]])
    assert not report.intact
    assert report.first_broken_sequence == 3


def test_verify_reports_a_gap_in_sequences() -> None:
    events = chain_of(4)
    report = verify("t", "u", [events[0], events[1], events[3]])
    assert report.first_broken_sequence == 3


def test_same_key_same_content_is_a_duplicate_with_the_original_sequence() -> None:
    first = chain_of(1)[0]
    existing = {"k0": Existing(first.sequence, first.hash, first.event.content_hash())}
    plan = plan_append("t", "u", 1, first.hash, [event("k0"), event("k9")], existing)
    assert plan.outcomes[0] == (1, first.hash, True)
    assert plan.outcomes[1][0] == 2 and plan.outcomes[1][2] is False
    assert [e.sequence for e in plan.inserts] == [2]


def test_same_key_other_content_is_refused() -> None:
    first = chain_of(1)[0]
    existing = {"k0": Existing(first.sequence, first.hash, first.event.content_hash())}
    with pytest.raises(Conflict):
        plan_append("t", "u", 1, first.hash, [event("k0", reason="CHANGED")], existing)


def test_a_key_repeated_inside_one_batch_is_written_once() -> None:
    plan = plan_append("t", "u", 0, GENESIS_HASH, [event("k"), event("k")], {})
    assert len(plan.inserts) == 1
    assert plan.outcomes[1] == (1, plan.inserts[0].hash, True)
