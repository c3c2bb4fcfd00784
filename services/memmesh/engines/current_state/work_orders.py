"""Use cases of work orders (seed 001 §2.21B): upsert, list, and the user's commands.

Each change is decided by the domain on the stored order and saved by compare-and-set on
its revision, with its ledger event queued in the same transaction; the first attempt to
record the event is made before the answer, and the outbox's drainer retries what failed.
"""

from __future__ import annotations

from collections.abc import Callable

from memmesh.engines.current_state.domain.work_orders import (
    Changed,
    Command,
    WorkOrder,
    WorkOrderDraft,
    commanded,
    page_size,
    upserted,
    validate_draft,
)
from memmesh.engines.current_state.ports import QueuedEvents, WorkOrderStore
from memmesh.errors import VersionMismatch

# The first attempt at recording a change's event on the Ledger, before the answer.
FIRST_DELIVERY_S = 0.5
# Bounded retries of the compare-and-set when the same order is changed at once elsewhere.
MAX_SAVE_ATTEMPTS = 8


class WorkOrderService:
    """Keeps the user's work orders and has every status change recorded on the Ledger."""

    def __init__(self, store: WorkOrderStore, events: QueuedEvents) -> None:
        self._store = store
        self._events = events

    async def upsert(
        self, tenant_id: str, user_id: str, draft: WorkOrderDraft, now_us: int
    ) -> Changed:
        """Create the order or move it to what the draft asks."""
        draft = validate_draft(draft)
        changed = await self._change(
            tenant_id, user_id, draft.work_order_id, lambda stored: upserted(stored, draft, now_us)
        )
        assert changed is not None  # an upsert creates what is not stored
        return changed

    async def run_command(
        self, tenant_id: str, user_id: str, work_order_id: str, command: Command, now_us: int
    ) -> Changed | None:
        """The user's "cancel that" or "forget that"; None when the user has no such order."""
        return await self._change(
            tenant_id,
            user_id,
            work_order_id,
            lambda stored: commanded(stored, command, now_us) if stored else None,
        )

    async def list(
        self, tenant_id: str, user_id: str, pending_only: bool, mentionable_only: bool, size: int
    ) -> list[WorkOrder]:
        """The user's orders, most recently updated first, then by id."""
        return await self._store.list(
            tenant_id, user_id, pending_only, mentionable_only, page_size(size)
        )

    async def _change(
        self,
        tenant_id: str,
        user_id: str,
        work_order_id: str,
        decide: Callable[[WorkOrder | None], Changed | None],
    ) -> Changed | None:
        for _ in range(MAX_SAVE_ATTEMPTS):
            stored = await self._store.get(tenant_id, user_id, work_order_id)
            changed = decide(stored)
            if changed is None or changed.unchanged:
                return changed
            expected = stored.revision if stored else 0
            if await self._store.save(tenant_id, user_id, changed.order, expected, changed.event):
                if changed.event is not None:
                    await self._events.deliver_queued(tenant_id, user_id, FIRST_DELIVERY_S)
                return changed
        raise VersionMismatch(f"work order {work_order_id} kept moving; retry")
