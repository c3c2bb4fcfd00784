"""The cloud mirror in an SQLite file."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from memmesh.engines.outbox_sync.mirror import (
    Head,
    PushBatch,
    PushPlan,
    Receipt,
    StoredItem,
    plan_push,
)
from memmesh.engines.outbox_sync.store import (
    ITEM_COLUMNS,
    RECEIPT_COLUMNS,
    item_row,
    receipt_of_row,
    stored_of_row,
)
from memmesh.storage.migrations import Migration
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE outbox_items (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                cursor INTEGER NOT NULL,
                item_id TEXT NOT NULL,
                item_kind TEXT NOT NULL,
                logical_key TEXT NOT NULL,
                version INTEGER NOT NULL,
                tombstone INTEGER NOT NULL,
                ciphertext BLOB NOT NULL,
                create_time_us INTEGER NOT NULL,
                content_hash BLOB NOT NULL,
                PRIMARY KEY (tenant_id, user_id, cursor),
                UNIQUE (tenant_id, user_id, item_id)
            )""",
            """CREATE TABLE mirror_heads (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                item_kind TEXT NOT NULL,
                logical_key TEXT NOT NULL,
                version INTEGER NOT NULL,
                cursor INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id, item_kind, logical_key)
            )""",
            "CREATE INDEX mirror_heads_by_cursor ON mirror_heads (tenant_id, user_id, cursor)",
            """CREATE TABLE outbox_receipts (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                first_cursor INTEGER NOT NULL,
                last_cursor INTEGER NOT NULL,
                item_count INTEGER NOT NULL,
                duplicate_count INTEGER NOT NULL,
                retry_count INTEGER NOT NULL,
                receive_time_us INTEGER NOT NULL,
                recorded INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant_id, user_id, first_cursor)
            )""",
            "CREATE INDEX outbox_receipts_pending ON outbox_receipts (tenant_id, user_id) WHERE recorded = 0",
        ),
    ),
)

_ITEM_SELECT = ", ".join(f"i.{c.strip()}" for c in ITEM_COLUMNS.split(","))


class SqliteMirrorStore:
    """One connection on the event loop (short local transactions); BEGIN IMMEDIATE
    serialises writers, so cursors stay gapless across processes sharing the file."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> SqliteMirrorStore:
        return cls(open_sqlite(path, MIGRATIONS))

    async def push(self, tenant_id: str, user_id: str, batch: PushBatch) -> PushPlan:
        db, who = self._db, (tenant_id, user_id)
        ids = sorted({item.item_id for item in batch.items})
        keys = sorted({(item.item_kind, item.logical_key) for item in batch.items})
        db.execute("BEGIN IMMEDIATE")
        try:
            head = db.execute(
                "SELECT COALESCE(MAX(cursor), 0) FROM outbox_items WHERE tenant_id = ? AND user_id = ?", who
            ).fetchone()[0]
            existing = {
                item_id: (int(cursor), bytes(content))
                for item_id, cursor, content in db.execute(
                    "SELECT item_id, cursor, content_hash FROM outbox_items WHERE tenant_id = ? AND user_id = ? "
                    f"AND item_id IN ({','.join('?' * len(ids))})",
                    (*who, *ids),
                )
            }
            heads = {
                (kind, key): Head(kind, key, int(version), int(cursor))
                for kind, key, version, cursor in db.execute(
                    "SELECT item_kind, logical_key, version, cursor FROM mirror_heads "
                    "WHERE tenant_id = ? AND user_id = ? AND (item_kind, logical_key) IN "
                    f"(VALUES {','.join('(?, ?)' for _ in keys)})",
                    (*who, *(part for key in keys for part in key)),
                )
            }
            plan = plan_push(int(head), batch, existing, heads)
            db.executemany(
                f"INSERT INTO outbox_items (tenant_id, user_id, {ITEM_COLUMNS}, content_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*who, *item_row(stored)) for stored in plan.inserts],
            )
            db.executemany(
                "INSERT INTO mirror_heads (tenant_id, user_id, item_kind, logical_key, version, cursor) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, item_kind, logical_key) "
                "DO UPDATE SET version = excluded.version, cursor = excluded.cursor",
                [(*who, h.item_kind, h.logical_key, h.version, h.cursor) for h in plan.heads],
            )
            if plan.receipt is not None:
                r = plan.receipt
                db.execute(
                    f"INSERT INTO outbox_receipts (tenant_id, user_id, {RECEIPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*who, r.device_id, r.first_cursor, r.last_cursor, r.item_count, r.duplicate_count,
                     r.retry_count, r.receive_time_us),
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return plan

    async def pending_receipts(self, tenant_id: str, user_id: str) -> list[Receipt]:
        rows = self._db.execute(
            f"SELECT {RECEIPT_COLUMNS} FROM outbox_receipts WHERE tenant_id = ? AND user_id = ? AND recorded = 0 "
            "ORDER BY first_cursor",
            (tenant_id, user_id),
        ).fetchall()
        return [receipt_of_row(row) for row in rows]

    async def mark_recorded(self, tenant_id: str, user_id: str, first_cursors: Sequence[int]) -> None:
        self._db.executemany(
            "UPDATE outbox_receipts SET recorded = 1 WHERE tenant_id = ? AND user_id = ? AND first_cursor = ?",
            [(tenant_id, user_id, cursor) for cursor in first_cursors],
        )

    async def pull(self, tenant_id: str, user_id: str, after_cursor: int, limit: int) -> list[StoredItem]:
        rows = self._db.execute(
            f"SELECT {ITEM_COLUMNS} FROM outbox_items WHERE tenant_id = ? AND user_id = ? AND cursor > ? "
            "ORDER BY cursor LIMIT ?",
            (tenant_id, user_id, after_cursor, limit),
        ).fetchall()
        return [stored_of_row(row) for row in rows]

    async def head_cursor(self, tenant_id: str, user_id: str) -> int:
        row = self._db.execute(
            "SELECT COALESCE(MAX(cursor), 0) FROM outbox_items WHERE tenant_id = ? AND user_id = ?",
            (tenant_id, user_id),
        ).fetchone()
        return int(row[0])

    async def restore_page(
        self, tenant_id: str, user_id: str, as_of: int, after_cursor: int, limit: int
    ) -> list[StoredItem]:
        rows = self._db.execute(
            f"SELECT {_ITEM_SELECT} FROM mirror_heads h JOIN outbox_items i "
            "ON i.tenant_id = h.tenant_id AND i.user_id = h.user_id AND i.cursor = h.cursor "
            "WHERE h.tenant_id = ? AND h.user_id = ? AND h.cursor > ? AND h.cursor <= ? ORDER BY h.cursor LIMIT ?",
            (tenant_id, user_id, after_cursor, as_of, limit),
        ).fetchall()
        return [stored_of_row(row) for row in rows]

    async def close(self) -> None:
        self._db.close()
