"""Push, pull and restore use cases over the SQLite store, with a fake ledger port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.engines.outbox_sync.adapters.sql_store import SqlMirrorStore
from memmesh.engines.outbox_sync.domain.mirror import MirrorItem, PushBatch
from memmesh.engines.outbox_sync.use_cases import OutboxSyncService
from memmesh.ledger_event import Appended, NewEvent
from memmesh.runtime.errors import DependencyFailed, InvalidInput

T, U = "tenant-a", "user-1"
NOW_US = 1_767_225_600_000_000


class FakeLedger:
    """Keeps events by idempotency key, like the ledger; can be switched off."""

    def __init__(self) -> None:
        self.events: dict[str, NewEvent] = {}
        self.down = False

    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[NewEvent]
    ) -> list[Appended]:
        if self.down:
            raise DependencyFailed("ledger", "UNAVAILABLE")
        outcomes = []
        for event in events:
            duplicate = event.idempotency_key in self.events
            self.events.setdefault(event.idempotency_key, event)
            outcomes.append(Appended(list(self.events).index(event.idempotency_key) + 1, duplicate))
        return outcomes


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlMirrorStore]:
    opened = await SqlMirrorStore.open("sqlite", tmp_path)
    yield opened
    await opened.close()


def item(item_id: str, key: str, version: int = 1, tombstone: bool = False) -> MirrorItem:
    return MirrorItem(item_id, "atom", key, version, tombstone, f"ct-{item_id}".encode(), 0)


def push(*items: MirrorItem, retry_count: int = 0) -> PushBatch:
    return PushBatch("device-1", list(items), retry_count, NOW_US)


async def test_a_batch_is_acked_and_recorded_once_with_ids_and_counts(
    store: SqlMirrorStore,
) -> None:
    ledger = FakeLedger()
    service = OutboxSyncService(store, ledger)
    acks = await service.push(T, U, push(item("a", "k1"), item("b", "k2")))
    again = await service.push(T, U, push(item("a", "k1"), item("b", "k2"), retry_count=1))
    assert [(a.cursor, a.duplicate) for a in acks] == [(1, False), (2, False)]
    assert [(a.cursor, a.duplicate) for a in again] == [(1, True), (2, True)]
    [event] = ledger.events.values()
    assert (event.event_type, event.reason_code) == ("OUTBOX_RECEIVED", "DEVICE_PUSH")
    assert dict(event.attributes) == {
        "device_id": "device-1",
        "item_count": 2,
        "duplicate_count": 0,
        "first_cursor": 1,
        "last_cursor": 2,
        "retry_count": 0,
    }


async def test_a_push_whose_ledger_call_fails_is_recorded_by_the_retry(
    store: SqlMirrorStore,
) -> None:
    ledger = FakeLedger()
    service = OutboxSyncService(store, ledger)
    ledger.down = True
    with pytest.raises(DependencyFailed):
        await service.push(T, U, push(item("a", "k1")))
    ledger.down = False
    acks = await service.push(T, U, push(item("a", "k1"), retry_count=1))
    assert [(a.cursor, a.duplicate) for a in acks] == [(1, True)]
    assert [e.idempotency_key for e in ledger.events.values()] == ["outbox-received:1"]
    assert await store.pending_receipts(T, U) == []


async def test_pull_pages_in_cursor_order(store: SqlMirrorStore) -> None:
    service = OutboxSyncService(store, FakeLedger())
    await service.push(T, U, push(*(item(f"i{n}", f"k{n}") for n in range(5))))
    first = await service.pull(T, U, 0, 2)
    rest = await service.pull(T, U, first.next_cursor, 0)
    assert [s.cursor for s in first.items] == [1, 2] and first.next_cursor == 2
    assert [s.cursor for s in rest.items] == [3, 4, 5] and rest.next_cursor == 5
    assert (await service.pull(T, U, 5, 0)).next_cursor == 5


async def test_restore_returns_the_highest_version_per_key_across_pages(
    store: SqlMirrorStore,
) -> None:
    ledger = FakeLedger()
    service = OutboxSyncService(store, ledger)
    await service.push(
        T, U, push(item("k1v2", "k1", 2), item("k2v1", "k2", 1), item("k3v1", "k3", 1))
    )
    await service.push(
        T, U, push(item("k1v1-late", "k1", 1), item("k3-forgotten", "k3", 2, tombstone=True))
    )
    seen, token, pages = [], "", 0
    while True:
        page = await service.restore(T, U, "device-2", NOW_US, token, 1)
        seen.extend(s.item.item_id for s in page.items)
        pages, token = pages + 1, page.next_page_token
        assert page.as_of_cursor == 5
        if not token:
            break
    assert seen == ["k1v2", "k2v1", "k3-forgotten"]
    restore_events = [e for e in ledger.events.values() if e.event_type == "OUTBOX_RESTORE_SERVED"]
    assert len(restore_events) == 1 and dict(restore_events[0].attributes) == {
        "device_id": "device-2",
        "as_of_cursor": 5,
    }


async def test_restore_of_an_unknown_user_is_empty(store: SqlMirrorStore) -> None:
    page = await OutboxSyncService(store, FakeLedger()).restore(
        T, "nobody", "device-2", NOW_US, "", 0
    )
    assert (page.items, page.as_of_cursor, page.next_page_token) == ([], 0, "")


@pytest.mark.parametrize("token", ["garbage", "5", "3.9", "99.1"])
async def test_a_forged_page_token_is_invalid_input_naming_it(
    store: SqlMirrorStore, token: str
) -> None:
    service = OutboxSyncService(store, FakeLedger())
    await service.push(T, U, push(item("a", "k1")))
    with pytest.raises(InvalidInput) as raised:
        await service.restore(T, U, "device-2", NOW_US, token, 0)
    assert raised.value.violations[0].field == "page_token"
