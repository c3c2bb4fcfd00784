"""The device outbox: append-only, flushed in order, an item deleted only once acknowledged."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import grpc

from memmesh.common.v1 import scope_pb2
from memmesh.device.device_db import transaction
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.runtime.timeconv import timestamp_of

# OutboxSync takes at most 500 items per push and 4 MB per message.
MAX_BATCH_ITEMS = 500
MAX_BATCH_BYTES = 2 * 1024 * 1024
_ENTRY_COLUMNS = (
    "item_id, item_kind, logical_key, version, tombstone, ciphertext, create_time_us, retry_count"
)


class SyncClient(Protocol):
    """The OutboxSync API as the device sees it (an OutboxSyncServiceStub fits)."""

    def Push(self, request: pb.PushRequest) -> Awaitable[pb.PushResponse]: ...

    def Pull(self, request: pb.PullRequest) -> Awaitable[pb.PullResponse]: ...

    def Restore(self, request: pb.RestoreRequest) -> Awaitable[pb.RestoreResponse]: ...


@dataclass(frozen=True)
class OutboxEntry:
    """An item waiting for its ack; ciphertext is already sealed with the cloud key."""

    item_id: str
    item_kind: str
    logical_key: str
    version: int
    tombstone: bool
    ciphertext: bytes
    create_time_us: int
    retry_count: int = 0


@dataclass(frozen=True)
class Backoff:
    """Retry policy for UNAVAILABLE: exponential, capped, deterministic."""

    max_attempts: int = 5
    initial_s: float = 0.05
    max_s: float = 2.0

    def delay(self, attempt: int) -> float:
        return min(self.initial_s * 2.0**attempt, self.max_s)


DEFAULT_BACKOFF = Backoff()


@dataclass(frozen=True)
class FlushReport:
    """What a flush did: items acked (new and duplicate), still queued, and why it stopped early."""

    acked: int
    duplicates: int
    remaining: int
    error: str = ""


class Outbox:
    """Queue of one (tenant, user) in the device file."""

    def __init__(
        self, db: sqlite3.Connection, tenant_id: str, user_id: str, device_id: str
    ) -> None:
        self._db = db
        self._tenant = tenant_id
        self._user = user_id
        self._device = device_id

    def enqueue(self, entry: OutboxEntry) -> bool:
        """Queue an item; False when its id is already queued or acknowledged (idempotent)."""
        with transaction(self._db):
            acked = self._db.execute(
                "SELECT 1 FROM outbox_acked WHERE tenant_id = ? AND user_id = ? AND item_id = ?",
                (self._tenant, self._user, entry.item_id),
            ).fetchone()
            if acked is not None:
                return False
            inserted = self._db.execute(
                f"INSERT OR IGNORE INTO outbox_items (tenant_id, user_id, {_ENTRY_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                (
                    self._tenant,
                    self._user,
                    entry.item_id,
                    entry.item_kind,
                    entry.logical_key,
                    entry.version,
                    int(entry.tombstone),
                    entry.ciphertext,
                    entry.create_time_us,
                ),
            )
            return inserted.rowcount == 1

    def pending(self, limit: int = 0) -> list[OutboxEntry]:
        """Queued items in enqueue order; limit 0 means all."""
        rows = self._db.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM outbox_items WHERE tenant_id = ? AND user_id = ? ORDER BY seq LIMIT ?",
            (self._tenant, self._user, limit or -1),
        ).fetchall()
        return [
            OutboxEntry(i, k, lk, int(v), bool(t), bytes(c), int(us), int(r))
            for i, k, lk, v, t, c, us, r in rows
        ]

    def last_errors(self) -> dict[str, tuple[int, str]]:
        """item_id -> (retry_count, last_error) of queued items (seed 001 §2.10 traceability)."""
        rows = self._db.execute(
            "SELECT item_id, retry_count, last_error FROM outbox_items WHERE tenant_id = ? AND user_id = ?",
            (self._tenant, self._user),
        ).fetchall()
        return {item_id: (int(count), error) for item_id, count, error in rows}

    def _next_batch(self) -> list[OutboxEntry]:
        batch: list[OutboxEntry] = []
        size = 0
        for entry in self.pending(MAX_BATCH_ITEMS):
            size += len(entry.ciphertext) + len(entry.item_id) + len(entry.logical_key) + 64
            if batch and size > MAX_BATCH_BYTES:
                break
            batch.append(entry)
        return batch

    def _record_failure(self, batch: list[OutboxEntry], error: str) -> None:
        self._db.executemany(
            "UPDATE outbox_items SET retry_count = retry_count + 1, last_error = ? "
            "WHERE tenant_id = ? AND user_id = ? AND item_id = ?",
            [(error, self._tenant, self._user, entry.item_id) for entry in batch],
        )

    def _delete_acked(self, acks: list[pb.PushAck]) -> None:
        # Ack-gated deletion: an item leaves the queue in the same transaction that logs its ack.
        with transaction(self._db):
            for ack in acks:
                self._db.execute(
                    "INSERT OR IGNORE INTO outbox_acked (tenant_id, user_id, item_id, cursor) VALUES (?, ?, ?, ?)",
                    (self._tenant, self._user, ack.item_id, ack.cursor),
                )
                self._db.execute(
                    "DELETE FROM outbox_items WHERE tenant_id = ? AND user_id = ? AND item_id = ?",
                    (self._tenant, self._user, ack.item_id),
                )

    def _request(self, batch: list[OutboxEntry], now_us: int) -> pb.PushRequest:
        return pb.PushRequest(
            scope=scope_pb2.UserScope(tenant_id=self._tenant, user_id=self._user),
            device_id=self._device,
            items=[
                pb.OutboxItem(
                    item_id=e.item_id,
                    item_kind=e.item_kind,
                    logical_key=e.logical_key,
                    version=e.version,
                    tombstone=e.tombstone,
                    ciphertext=e.ciphertext,
                    create_time=timestamp_of(e.create_time_us),
                )
                for e in batch
            ],
            now=timestamp_of(now_us),
            retry_count=max(e.retry_count for e in batch),
        )

    async def flush(
        self,
        client: SyncClient,
        now_us: int,
        backoff: Backoff = DEFAULT_BACKOFF,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> FlushReport:
        """Send queued items in order, in batches; retry UNAVAILABLE with backoff and stop at
        any other error, leaving unacknowledged items queued for the next flush."""
        acked = duplicates = attempt = 0
        while batch := self._next_batch():
            try:
                reply = await client.Push(self._request(batch, now_us))
            except grpc.aio.AioRpcError as failure:
                code = failure.code()
                self._record_failure(batch, f"{code.name}: {failure.details() or ''}"[:200])
                attempt += 1
                if code != grpc.StatusCode.UNAVAILABLE or attempt >= backoff.max_attempts:
                    return FlushReport(acked, duplicates, len(self.pending()), code.name)
                await sleep(backoff.delay(attempt - 1))
                continue
            attempt = 0
            sent = {entry.item_id for entry in batch}
            acks = [ack for ack in reply.acks if ack.item_id in sent]
            self._delete_acked(acks)
            acked += len(acks)
            duplicates += sum(ack.duplicate for ack in acks)
            if len({ack.item_id for ack in acks}) < len(sent):
                return FlushReport(acked, duplicates, len(self.pending()), "MISSING_ACK")
        return FlushReport(acked, duplicates, 0)
