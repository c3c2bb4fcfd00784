"""One user's continuity on one device: vault writes mirrored through the outbox, restore and pull.

The vault is sealed with the device-bound key; what goes to the cloud is sealed with
the user's cloud key (seed 001 §2.13: device-bound keys stay on the device). Restore
only rebuilds the vault: it never executes anything (Q15).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memmesh.common.v1 import scope_pb2
from memmesh.device.crypto import IntegrityError, Sealer, associated_data
from memmesh.device.device_db import open_device_db, transaction
from memmesh.device.outbox import (
    DEFAULT_BACKOFF,
    Backoff,
    FlushReport,
    Outbox,
    OutboxEntry,
    SyncClient,
)
from memmesh.device.records import ContinuityRecord, item_id_of, tombstone
from memmesh.device.vault import Vault
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.runtime.timeconv import timestamp_of

PULL_LIMIT = 1000


@dataclass(frozen=True)
class RestoreReport:
    """What a restore applied and how large the set was on the wire."""

    items_received: int
    records_applied: int
    pages: int
    cursor: int
    restore_set_bytes: int
    largest_page_bytes: int


class DeviceSync:
    """The device side of sync for one (tenant, user)."""

    def __init__(
        self,
        db: sqlite3.Connection,
        tenant_id: str,
        user_id: str,
        device_id: str,
        device_key: bytes,
        cloud_key: bytes,
    ) -> None:
        self._db = db
        self._tenant = tenant_id
        self._user = user_id
        self._device = device_id
        self._cloud = Sealer(cloud_key)
        self.vault = Vault(db, tenant_id, user_id, device_key)
        self.outbox = Outbox(db, tenant_id, user_id, device_id)

    @classmethod
    def open(
        cls,
        path: Path,
        tenant_id: str,
        user_id: str,
        device_id: str,
        device_key: bytes,
        cloud_key: bytes,
    ) -> DeviceSync:
        """Open (creating) the device file at path."""
        return cls(open_device_db(path), tenant_id, user_id, device_id, device_key, cloud_key)

    def close(self) -> None:
        self._db.close()

    def _mirror_binding(
        self, item_id: str, kind: str, key: str, version: int, is_tombstone: bool
    ) -> bytes:
        return associated_data(
            "mirror", self._tenant, self._user, item_id, kind, key, version, is_tombstone
        )

    def save(self, record: ContinuityRecord, now_us: int) -> bool:
        """Write to the vault and queue the mirror item in one transaction; False if unchanged."""
        with transaction(self._db):
            if not self.vault.put(record):
                return False
            item_id = item_id_of(self._tenant, self._user, self._device, record)
            binding = self._mirror_binding(
                item_id, record.kind, record.key, record.version, record.tombstone
            )
            self.outbox.enqueue(
                OutboxEntry(
                    item_id=item_id,
                    item_kind=record.kind,
                    logical_key=record.key,
                    version=record.version,
                    tombstone=record.tombstone,
                    ciphertext=self._cloud.seal(record.body, binding),
                    create_time_us=now_us,
                )
            )
        return True

    def forget(self, kind: str, key: str, version: int, now_us: int) -> bool:
        """Replace an artifact by its tombstone, locally and in the mirror."""
        return self.save(tombstone(kind, key, version), now_us)

    async def flush(
        self, client: SyncClient, now_us: int, backoff: Backoff = DEFAULT_BACKOFF
    ) -> FlushReport:
        """Send the outbox (see Outbox.flush)."""
        return await self.outbox.flush(client, now_us, backoff)

    def _open_item(self, item: pb.OutboxItem) -> ContinuityRecord:
        if item.tombstone and not item.ciphertext:
            # The server's own tombstone: the user forgot the artifact (OutboxSync.ForgetItems).
            # It carries nothing to open; the copy here is deleted like any tombstone's.
            return ContinuityRecord(item.item_kind, item.logical_key, item.version, b"", True)
        binding = self._mirror_binding(
            item.item_id, item.item_kind, item.logical_key, item.version, item.tombstone
        )
        body = self._cloud.open(item.ciphertext, binding)
        try:
            return ContinuityRecord(
                item.item_kind, item.logical_key, item.version, body, item.tombstone
            )
        except ValueError as bad:
            raise IntegrityError(f"mirror item {item.item_id!r} is malformed: {bad}") from bad

    def _apply(self, items: Iterable[pb.OutboxItem]) -> int:
        # Every item opens before any is applied, so a bad page changes nothing.
        opened = [(self._open_item(item), item.cursor) for item in items]
        with transaction(self._db):
            return sum(self.vault.apply_synced(record, cursor) for record, cursor in opened)

    def sync_cursor(self) -> int:
        """The mirror cursor this device has applied up to."""
        row = self._db.execute(
            "SELECT cursor FROM sync_cursors WHERE tenant_id = ? AND user_id = ?",
            (self._tenant, self._user),
        ).fetchone()
        return int(row[0]) if row else 0

    def _save_cursor(self, cursor: int) -> None:
        self._db.execute(
            "INSERT INTO sync_cursors (tenant_id, user_id, cursor) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET cursor = MAX(cursor, excluded.cursor)",
            (self._tenant, self._user, cursor),
        )

    def _scope(self) -> scope_pb2.UserScope:
        return scope_pb2.UserScope(tenant_id=self._tenant, user_id=self._user)

    async def pull(self, client: SyncClient, on_page: Callable[[int], None] | None = None) -> int:
        """Apply every mirror item after this device's cursor; returns records changed."""
        applied, cursor = 0, self.sync_cursor()
        while True:
            reply = await client.Pull(
                pb.PullRequest(scope=self._scope(), after_cursor=cursor, limit=PULL_LIMIT)
            )
            if on_page is not None:
                on_page(reply.ByteSize())
            if not reply.items:
                return applied
            applied += self._apply(reply.items)
            cursor = reply.next_cursor
            self._save_cursor(cursor)

    async def restore(self, client: SyncClient, now_us: int, page_size: int = 0) -> RestoreReport:
        """Rebuild the vault from the mirror: the restore set page by page, then later deltas.

        Deterministic: the same mirror gives the same vault listing in any arrival order.
        """
        token, pages, received, applied, total_bytes, largest = "", 0, 0, 0, 0, 0
        while True:
            reply = await client.Restore(
                pb.RestoreRequest(
                    scope=self._scope(),
                    device_id=self._device,
                    now=timestamp_of(now_us),
                    page_token=token,
                    page_size=page_size,
                )
            )
            size = reply.ByteSize()
            pages, received, total_bytes, largest = (
                pages + 1,
                received + len(reply.items),
                total_bytes + size,
                max(largest, size),
            )
            applied += self._apply(reply.items)
            token = reply.next_page_token
            if not token:
                break
        self._save_cursor(reply.cursor)

        def count(size: int) -> None:
            nonlocal total_bytes, largest
            total_bytes, largest = total_bytes + size, max(largest, size)

        applied += await self.pull(client, on_page=count)
        return RestoreReport(received, applied, pages, self.sync_cursor(), total_bytes, largest)
