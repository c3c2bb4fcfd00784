"""One contract suite for OutboxSync's storage port, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.engines.outbox_sync.adapters.sql_store import SqlMirrorStore
from memmesh.engines.outbox_sync.domain.mirror import MirrorItem, PushBatch
from memmesh.engines.outbox_sync.ports import MirrorStore
from memmesh.runtime.errors import Conflict

NOW_US = 1_767_225_600_000_000


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MirrorStore]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened: MirrorStore = await SqlMirrorStore.open(url, tmp_path)
    yield opened
    await opened.close()


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


def item(
    item_id: str,
    key: str,
    version: int = 1,
    tombstone: bool = False,
    ciphertext: bytes | None = None,
) -> MirrorItem:
    return MirrorItem(
        item_id, "atom", key, version, tombstone, ciphertext or f"ct-{item_id}".encode(), 42
    )


def batch(*items: MirrorItem) -> PushBatch:
    return PushBatch("device-1", list(items), 0, NOW_US)


async def test_an_unknown_user_has_nothing(store: MirrorStore) -> None:
    who = user()
    assert await store.head_cursor(*who) == 0
    assert await store.pull(*who, 0, 100) == []
    assert await store.restore_page(*who, 0, 0, 100) == []
    assert await store.pending_receipts(*who) == []


async def test_push_round_trips_every_field_and_dedupes_by_id(store: MirrorStore) -> None:
    who = user()
    sealed = item("a", "k1", 3, ciphertext=b"\x00\xffsealed")
    first = await store.push(*who, batch(sealed, item("b", "k2", tombstone=True)))
    again = await store.push(*who, batch(sealed, item("c", "k3")))
    assert [(a.cursor, a.duplicate) for a in first.acks] == [(1, False), (2, False)]
    assert [(a.cursor, a.duplicate) for a in again.acks] == [(1, True), (3, False)]
    pulled = await store.pull(*who, 0, 100)
    assert [(s.cursor, s.item) for s in pulled] == [
        (1, sealed),
        (2, item("b", "k2", tombstone=True)),
        (3, item("c", "k3")),
    ]
    assert await store.head_cursor(*who) == 3


async def test_the_same_id_with_other_content_is_a_conflict_and_writes_nothing(
    store: MirrorStore,
) -> None:
    who = user()
    await store.push(*who, batch(item("a", "k1")))
    with pytest.raises(Conflict):
        await store.push(*who, batch(item("b", "k2"), item("a", "k1", ciphertext=b"changed")))
    assert [s.item.item_id for s in await store.pull(*who, 0, 100)] == ["a"]
    assert len(await store.pending_receipts(*who)) == 1


async def test_users_never_see_each_other(store: MirrorStore) -> None:
    one, two = user(), user()
    await store.push(*one, batch(item("a", "k1")))
    acks = (await store.push(*two, batch(item("a", "k1", ciphertext=b"other user")))).acks
    assert (acks[0].cursor, acks[0].duplicate) == (1, False)
    assert [s.item.ciphertext for s in await store.pull(*two, 0, 10)] == [b"other user"]


async def test_restore_pages_hold_the_head_of_each_key_as_of_a_cursor(store: MirrorStore) -> None:
    who = user()
    await store.push(
        *who, batch(item("k1v2", "k1", 2), item("k2v1", "k2"), item("k1v1-late", "k1", 1))
    )
    await store.push(*who, batch(item("k2-gone", "k2", 2, tombstone=True), item("k3v1", "k3")))
    assert [s.item.item_id for s in await store.restore_page(*who, 5, 0, 100)] == [
        "k1v2",
        "k2-gone",
        "k3v1",
    ]
    assert [s.item.item_id for s in await store.restore_page(*who, 5, 1, 1)] == ["k2-gone"]
    assert [s.item.item_id for s in await store.restore_page(*who, 4, 0, 100)] == [
        "k1v2",
        "k2-gone",
    ]


async def test_receipts_stay_pending_until_marked(store: MirrorStore) -> None:
    who = user()
    await store.push(*who, batch(item("a", "k1"), item("b", "k2")))
    await store.push(*who, batch(item("a", "k1"), item("c", "k3")))
    pending = await store.pending_receipts(*who)
    assert [(r.first_cursor, r.last_cursor, r.item_count, r.duplicate_count) for r in pending] == [
        (1, 2, 2, 0),
        (3, 3, 1, 1),
    ]
    await store.mark_recorded(*who, [1])
    assert [r.first_cursor for r in await store.pending_receipts(*who)] == [3]


async def test_concurrent_pushes_of_one_user_get_gapless_cursors(store: MirrorStore) -> None:
    who = user()
    await asyncio.gather(
        *(
            store.push(*who, batch(*(item(f"i{n}-{m}", f"k{n}-{m}") for m in range(5))))
            for n in range(10)
        )
    )
    assert [s.cursor for s in await store.pull(*who, 0, 1000)] == list(range(1, 51))
