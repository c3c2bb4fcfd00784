"""The mirror's storage port and its adapters, chosen by configuration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from memmesh.engines.outbox_sync.mirror import MirrorItem, PushBatch, PushPlan, Receipt, StoredItem
from memmesh.runtime.settings import MeshSettings

ITEM_COLUMNS = "cursor, item_id, item_kind, logical_key, version, tombstone, ciphertext, create_time_us"
RECEIPT_COLUMNS = (
    "device_id, first_cursor, last_cursor, item_count, duplicate_count, retry_count, receive_time_us"
)


class MirrorStore(Protocol):
    """Items per (tenant, user) in cursor order, latest-per-key heads and pending ledger receipts."""

    async def push(self, tenant_id: str, user_id: str, batch: PushBatch) -> PushPlan:
        """Plan and write a batch atomically (items, heads, receipt); raise Conflict on a changed id."""
        ...

    async def pending_receipts(self, tenant_id: str, user_id: str) -> list[Receipt]:
        """Receipts not yet recorded on the ledger, in cursor order."""
        ...

    async def mark_recorded(self, tenant_id: str, user_id: str, first_cursors: Sequence[int]) -> None:
        """Note that these receipts are on the ledger."""
        ...

    async def pull(self, tenant_id: str, user_id: str, after_cursor: int, limit: int) -> list[StoredItem]:
        """At most limit items after after_cursor, in cursor order."""
        ...

    async def head_cursor(self, tenant_id: str, user_id: str) -> int:
        """The user's last cursor (0 when nothing is stored)."""
        ...

    async def restore_page(
        self, tenant_id: str, user_id: str, as_of: int, after_cursor: int, limit: int
    ) -> list[StoredItem]:
        """Head items with after_cursor < cursor <= as_of, in cursor order, at most limit."""
        ...

    async def close(self) -> None: ...


def item_row(stored: StoredItem) -> tuple[Any, ...]:
    """Column values of ITEM_COLUMNS plus the content hash, for an insert."""
    item = stored.item
    return (
        stored.cursor,
        item.item_id,
        item.item_kind,
        item.logical_key,
        item.version,
        int(item.tombstone),
        item.ciphertext,
        item.create_time_us,
        item.content_hash(),
    )


def stored_of_row(row: Sequence[Any]) -> StoredItem:
    """A StoredItem from a row of ITEM_COLUMNS."""
    cursor, item_id, kind, key, version, tombstone, ciphertext, create_us = row
    return StoredItem(int(cursor), MirrorItem(item_id, kind, key, int(version), bool(tombstone), bytes(ciphertext), int(create_us)))


def receipt_of_row(row: Sequence[Any]) -> Receipt:
    """A Receipt from a row of RECEIPT_COLUMNS."""
    device_id, first, last, count, duplicates, retries, receive_us = row
    return Receipt(device_id, int(first), int(last), int(count), int(duplicates), int(retries), int(receive_us))


async def open_mirror_store(settings: MeshSettings) -> MirrorStore:
    """SQLite under data_dir by default, PostgreSQL for a postgresql:// URL."""
    match settings.storage_url:
        case "sqlite":
            from memmesh.engines.outbox_sync.sqlite_store import SqliteMirrorStore

            return SqliteMirrorStore.open(settings.sqlite_path("outbox_sync"))
        case url if url.startswith(("postgresql://", "postgres://")):
            from memmesh.engines.outbox_sync.postgres_store import PostgresMirrorStore

            return await PostgresMirrorStore.open(url)
        case other:
            raise ValueError(f"unsupported storage_url {other!r}")
