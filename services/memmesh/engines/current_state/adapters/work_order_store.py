"""Work orders in SQL (the table of `sql_store`'s migration 2), one row per order, saved by
compare-and-set on its revision; a change's ledger event is queued in the outbox in the
same transaction, so the row and its event are written together or not at all."""

from __future__ import annotations

import json
from dataclasses import asdict

from memmesh.engines.current_state.domain.work_orders import (
    PENDING,
    Reason,
    Status,
    StatusEvent,
    WorkOrder,
)
from memmesh.outbox import Effect, EffectRejected, QueuedEffect, enqueue_in, outbox_lock
from memmesh.outbox.drainer import wall_clock_us
from memmesh.storage.sql import Database, Row, SqlTx, marks

# The outbox effect that records a work order's event on the Ledger, and its lane.
WORK_ORDER_EVENT = "work_order_event"
LEDGER_LANE = "ledger"

_COLUMNS = (
    "work_order_id, title, status, pending_question, summary, thread_id, "
    "create_us, update_us, do_not_mention, revision"
)


def _order(row: Row) -> WorkOrder:
    order_id, title, status, question, summary, thread_id, created, updated, quiet, revision = row
    return WorkOrder(
        str(order_id),
        str(title),
        Status(status),
        str(question),
        str(summary),
        str(thread_id),
        int(created),
        int(updated),
        bool(quiet),
        int(revision),
    )


def queued_event(event: StatusEvent) -> Effect:
    """The outbox form of a work order's event, keyed as its ledger event is."""
    return Effect(
        WORK_ORDER_EVENT,
        json.dumps(asdict(event), sort_keys=True, separators=(",", ":")).encode(),
        event.ledger_event().idempotency_key,
        LEDGER_LANE,
    )


def event_of(queued: QueuedEffect) -> StatusEvent:
    """The event a queued effect carries; EffectRejected when it cannot be read."""
    try:
        fields = json.loads(queued.payload)
        return StatusEvent(
            **{**fields, "status": Status(fields["status"]), "reason": Reason(fields["reason"])}
        )
    except (ValueError, TypeError, KeyError) as error:
        raise EffectRejected(f"undecodable work order event {queued.key}") from error


async def _upsert(tx: SqlTx, tenant_id: str, user_id: str, order: WorkOrder) -> int:
    values = (
        tenant_id,
        user_id,
        order.work_order_id,
        order.title,
        order.status.value,
        order.pending_question,
        order.summary,
        order.thread_id,
        order.create_us,
        order.update_us,
        int(order.do_not_mention),
        order.revision,
    )
    return await tx.execute(
        f"INSERT INTO work_orders (tenant_id, user_id, {_COLUMNS}) "
        f"VALUES ({marks(len(values))}) ON CONFLICT (tenant_id, user_id, work_order_id) DO NOTHING",
        values,
    )


class SqlWorkOrderStore:
    """The WorkOrderStore port over Current State's database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def get(self, tenant_id: str, user_id: str, work_order_id: str) -> WorkOrder | None:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM work_orders "
                "WHERE tenant_id = ? AND user_id = ? AND work_order_id = ?",
                (tenant_id, user_id, work_order_id),
            )
        return _order(row) if row else None

    async def save(
        self,
        tenant_id: str,
        user_id: str,
        order: WorkOrder,
        expected_revision: int,
        event: StatusEvent | None,
    ) -> bool:
        async with self._db.write(*outbox_lock(tenant_id, user_id)) as tx:
            if expected_revision == 0:
                changed = await _upsert(tx, tenant_id, user_id, order)
            else:
                changed = await tx.execute(
                    "UPDATE work_orders SET title = ?, status = ?, pending_question = ?, "
                    "summary = ?, thread_id = ?, update_us = ?, do_not_mention = ?, revision = ? "
                    "WHERE tenant_id = ? AND user_id = ? AND work_order_id = ? AND revision = ?",
                    (
                        order.title,
                        order.status.value,
                        order.pending_question,
                        order.summary,
                        order.thread_id,
                        order.update_us,
                        int(order.do_not_mention),
                        order.revision,
                        tenant_id,
                        user_id,
                        order.work_order_id,
                        expected_revision,
                    ),
                )
            if changed == 1 and event is not None:
                await enqueue_in(tx, tenant_id, user_id, [queued_event(event)], wall_clock_us())
        return changed == 1

    async def list(
        self, tenant_id: str, user_id: str, pending_only: bool, mentionable_only: bool, limit: int
    ) -> list[WorkOrder]:
        where, params = ["tenant_id = ?", "user_id = ?"], [tenant_id, user_id]
        if pending_only:
            statuses = sorted(status.value for status in PENDING)
            where.append(f"status IN ({marks(len(statuses))})")
            params += statuses
        if mentionable_only:
            where.append("do_not_mention = 0")
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM work_orders WHERE {' AND '.join(where)} "
                f"ORDER BY update_us DESC, work_order_id{self._db.dialect.bytewise} LIMIT ?",
                (*params, limit),
            )
        return [_order(row) for row in rows]

    async def forget_user(self, tenant_id: str, user_id: str) -> int:
        """Delete every work order of the user (forget everything about me); how many."""
        async with self._db.write(*outbox_lock(tenant_id, user_id)) as tx:
            deleted = await tx.execute(
                "DELETE FROM work_orders WHERE tenant_id = ? AND user_id = ?", (tenant_id, user_id)
            )
        if deleted:
            await self._db.reclaim_erased(["work_orders"])
        return deleted
