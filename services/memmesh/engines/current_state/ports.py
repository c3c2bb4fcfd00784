"""Current State's ports: its stores, the Ledger it appends to and replays from, and the
outbox that carries work orders' events to the Ledger."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.current_state.domain.state import Change, UserState
from memmesh.engines.current_state.domain.work_orders import StatusEvent, WorkOrder


class StateStore(Protocol):
    """The projection: one row per user."""

    async def get(self, tenant_id: str, user_id: str) -> UserState | None: ...

    async def save(
        self, tenant_id: str, user_id: str, state: UserState, expected_version: int
    ) -> bool:
        """Compare-and-set on the stored version (0 = not stored yet); False when it moved."""
        ...

    async def replace(self, tenant_id: str, user_id: str, state: UserState) -> None:
        """Overwrite unconditionally (rebuild)."""
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class LedgerRecord:
    """A state event read back from the ledger."""

    sequence: int
    change: Change


@dataclass(frozen=True)
class AppendedChange:
    """Where a change's event landed. `follows` when it was written by a conditional append
    right after the state event asked for: the next state event, foldable with no replay."""

    sequence: int
    duplicate: bool
    follows: bool = False


class StateLedger(Protocol):
    """What Current State needs from the Ledger engine."""

    async def append_change(
        self,
        tenant_id: str,
        user_id: str,
        change: Change,
        reason_code: str,
        idempotency_key: str,
        now_us: int,
        after_sequence: int | None = None,
    ) -> AppendedChange:
        """Append the change's event. With after_sequence, first only if the user's last state
        event is at after_sequence (0: none), and then it `follows`; when another state event
        is there, it is appended all the same and the caller catches up. A key already
        stored answers duplicate."""
        ...

    def read_changes(
        self, tenant_id: str, user_id: str, after_sequence: int
    ) -> AsyncIterator[LedgerRecord]:
        """State events after a sequence, in order (other event types are skipped)."""
        ...


class WorkOrderStore(Protocol):
    """The user's work orders: one row per order."""

    async def get(self, tenant_id: str, user_id: str, work_order_id: str) -> WorkOrder | None: ...

    async def save(
        self,
        tenant_id: str,
        user_id: str,
        order: WorkOrder,
        expected_revision: int,
        event: StatusEvent | None,
    ) -> bool:
        """Compare-and-set on the stored revision (0 = not stored yet), queueing the event's
        ledger effect in the same transaction; False when the revision moved."""
        ...

    async def list(
        self, tenant_id: str, user_id: str, pending_only: bool, mentionable_only: bool, limit: int
    ) -> list[WorkOrder]:
        """Most recently updated first, then by id (byte order)."""
        ...

    async def forget_user(self, tenant_id: str, user_id: str) -> int:
        """Delete every work order of the user; how many."""
        ...


class QueuedEvents(Protocol):
    """The part of `memmesh.outbox.Outbox` the work order use cases call."""

    async def deliver_queued(self, tenant_id: str, user_id: str, timeout_s: float) -> int:
        """Make the first attempt at the user's queued events now; how many are left."""
        ...
