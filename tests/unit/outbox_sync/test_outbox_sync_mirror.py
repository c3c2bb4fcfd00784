"""The mirror's rules without storage or gRPC: idempotent receipt, gapless cursors, heads."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memmesh.engines.outbox_sync.domain.mirror import (
    Head,
    MirrorItem,
    PushBatch,
    StoredItem,
    item_size,
    plan_push,
    within_bytes,
)
from memmesh.runtime.errors import Conflict, InvalidInput


def item(
    item_id: str,
    key: str = "atom-1",
    version: int = 1,
    ciphertext: bytes = b"sealed",
    tombstone: bool = False,
) -> MirrorItem:
    return MirrorItem(item_id, "atom", key, version, tombstone, ciphertext, 0)


def batch(*items: MirrorItem, retry_count: int = 0) -> PushBatch:
    return PushBatch("device-1", list(items), retry_count, 1_767_225_600_000_000)


def test_new_items_get_gapless_cursors_after_the_head() -> None:
    plan = plan_push(7, batch(item("a"), item("b", "atom-2"), item("c", "atom-3")), {}, {})
    assert [s.cursor for s in plan.inserts] == [8, 9, 10]
    assert [(a.item_id, a.cursor, a.duplicate) for a in plan.acks] == [
        ("a", 8, False),
        ("b", 9, False),
        ("c", 10, False),
    ]


def test_a_stored_item_with_the_same_content_is_a_duplicate_with_its_original_cursor() -> None:
    first = item("a")
    plan = plan_push(3, batch(first, item("b", "atom-2")), {"a": (2, first.content_hash())}, {})
    assert [(a.item_id, a.cursor, a.duplicate) for a in plan.acks] == [
        ("a", 2, True),
        ("b", 4, False),
    ]
    assert [s.item.item_id for s in plan.inserts] == ["b"]
    assert plan.receipt is not None and (plan.receipt.item_count, plan.receipt.duplicate_count) == (
        1,
        1,
    )


def test_a_stored_item_id_with_other_content_is_a_conflict() -> None:
    stored = item("a", ciphertext=b"one")
    with pytest.raises(Conflict):
        plan_push(1, batch(item("a", ciphertext=b"two")), {"a": (1, stored.content_hash())}, {})


def test_an_id_repeated_in_one_batch_is_acked_twice_but_stored_once() -> None:
    plan = plan_push(0, batch(item("a"), item("a")), {}, {})
    assert [(a.cursor, a.duplicate) for a in plan.acks] == [(1, False), (1, True)]
    assert len(plan.inserts) == 1


def test_an_id_repeated_in_one_batch_with_other_content_names_the_field() -> None:
    with pytest.raises(InvalidInput) as raised:
        plan_push(0, batch(item("a"), item("a", ciphertext=b"other")), {}, {})
    assert raised.value.violations[0].field == "items[1].item_id"


def test_an_all_duplicate_batch_writes_nothing_and_has_no_receipt() -> None:
    a = item("a")
    plan = plan_push(5, batch(a), {"a": (5, a.content_hash())}, {})
    assert plan.inserts == [] and plan.heads == [] and plan.receipt is None


def test_a_late_older_version_never_moves_the_head() -> None:
    heads = {("atom", "atom-1"): Head("atom", "atom-1", 5, 3)}
    plan = plan_push(3, batch(item("old", version=4)), {}, heads)
    assert plan.heads == [] and len(plan.inserts) == 1


def test_a_newer_version_or_a_later_equal_version_moves_the_head() -> None:
    heads = {
        ("atom", "atom-1"): Head("atom", "atom-1", 5, 3),
        ("atom", "atom-2"): Head("atom", "atom-2", 2, 1),
    }
    plan = plan_push(3, batch(item("new", version=6), item("same", "atom-2", version=2)), {}, heads)
    assert plan.heads == [Head("atom", "atom-1", 6, 4), Head("atom", "atom-2", 2, 5)]


def test_within_one_batch_the_highest_version_wins_whatever_the_order() -> None:
    plan = plan_push(
        0,
        batch(
            item("v3", version=3),
            item("v1", version=1),
            item("t", version=2, ciphertext=b"x", tombstone=True),
        ),
        {},
        {},
    )
    assert plan.heads == [Head("atom", "atom-1", 3, 1)]


def test_the_receipt_carries_ids_and_counts_never_payload() -> None:
    plan = plan_push(0, batch(item("a", ciphertext=b"secret"), retry_count=2), {}, {})
    assert plan.receipt is not None
    assert b"secret" not in repr(plan.receipt).encode()
    assert (plan.receipt.first_cursor, plan.receipt.last_cursor, plan.receipt.retry_count) == (
        1,
        1,
        2,
    )


@given(
    st.lists(st.integers(min_value=1, max_value=5000), max_size=40),
    st.integers(min_value=1, max_value=20_000),
)
def test_within_bytes_takes_the_longest_prefix_under_the_cap_and_never_nothing(
    sizes: list[int], cap: int
) -> None:
    items = [
        StoredItem(n + 1, item(f"i{n}", ciphertext=b"x" * size)) for n, size in enumerate(sizes)
    ]
    taken = within_bytes(items, cap)
    assert taken == items[: len(taken)]
    if items:
        assert taken
        assert len(taken) == 1 or sum(item_size(s) for s in taken) <= cap
        assert len(taken) == len(items) or sum(item_size(s) for s in items[: len(taken) + 1]) > cap
