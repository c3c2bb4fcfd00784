"""The mirror's ports: its store and the Ledger its events go to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memmesh.engines.outbox_sync.domain.mirror import (
    ForgetPlan,
    PushBatch,
    PushPlan,
    Receipt,
    StoredItem,
)
from memmesh.ledger_event import Appended, NewEvent


class MirrorStore(Protocol):
    """Items per (tenant, user) in cursor order, latest-per-key heads and pending ledger receipts."""

    async def push(self, tenant_id: str, user_id: str, batch: PushBatch) -> PushPlan:
        """Plan and write a batch atomically (items, heads, receipt); raise Conflict on a changed id."""
        ...

    async def forget(
        self, tenant_id: str, user_id: str, item_kind: str, keys: Sequence[str], now_us: int
    ) -> ForgetPlan:
        """Drop the artifacts' stored versions and write a tombstone above each (every
        artifact of the user when `item_kind` is empty), atomically."""
        ...

    async def pending_receipts(self, tenant_id: str, user_id: str) -> list[Receipt]:
        """Receipts not yet recorded on the ledger, in cursor order."""
        ...

    async def mark_recorded(
        self, tenant_id: str, user_id: str, first_cursors: Sequence[int]
    ) -> None:
        """Note that these receipts are on the ledger."""
        ...

    async def pull(
        self, tenant_id: str, user_id: str, after_cursor: int, limit: int
    ) -> list[StoredItem]:
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


class SyncLedger(Protocol):
    """Where the mirror's reason-coded events go (the kit's LedgerWriter)."""

    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[NewEvent]
    ) -> Sequence[Appended]:
        """Append idempotently, in order."""
        ...
