"""The cloud mirror in SQL: one text for SQLite (a file under data_dir) and PostgreSQL
(schema `outbox_sync`). Pushes of one user serialise on the database's per-user write
lock, so cursors stay gapless across any number of engine processes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memmesh.engines.outbox_sync.domain.mirror import (
    FORGET_ITEM_PREFIX,
    ForgetPlan,
    Head,
    MirrorItem,
    PushBatch,
    PushPlan,
    Receipt,
    StoredItem,
    plan_forget,
    plan_push,
)
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, SqlTx, marks, open_database

ENGINE = "outbox_sync"
ITEM_COLUMNS = (
    "cursor, item_id, item_kind, logical_key, version, tombstone, ciphertext, create_time_us"
)
RECEIPT_COLUMNS = "device_id, first_cursor, last_cursor, item_count, duplicate_count, retry_count, receive_time_us"


def _not_recorded(dialect: Dialect) -> str:
    # Word for word the predicate of the partial index, so each planner can use it.
    return "recorded = 0" if dialect is Dialect.SQLITE else "NOT recorded"


def migrations_for(dialect: Dialect) -> tuple[Migration, ...]:
    """The mirror's schema in the dialect's type names."""
    big, flag = dialect.big_int, "INTEGER" if dialect is Dialect.SQLITE else "SMALLINT"
    recorded = (
        "INTEGER NOT NULL DEFAULT 0"
        if dialect is Dialect.SQLITE
        else "BOOLEAN NOT NULL DEFAULT FALSE"
    )
    return (
        Migration(
            1,
            (
                f"""CREATE TABLE outbox_items (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                cursor {big} NOT NULL,
                item_id TEXT NOT NULL,
                item_kind TEXT NOT NULL,
                logical_key TEXT NOT NULL,
                version {big} NOT NULL,
                tombstone {flag} NOT NULL,
                ciphertext {dialect.blob} NOT NULL,
                create_time_us {big} NOT NULL,
                content_hash {dialect.blob} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, cursor),
                UNIQUE (tenant_id, user_id, item_id)
            )""",
                f"""CREATE TABLE mirror_heads (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                item_kind TEXT NOT NULL,
                logical_key TEXT NOT NULL,
                version {big} NOT NULL,
                cursor {big} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, item_kind, logical_key)
            )""",
                "CREATE INDEX mirror_heads_by_cursor ON mirror_heads (tenant_id, user_id, cursor)",
                f"""CREATE TABLE outbox_receipts (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                first_cursor {big} NOT NULL,
                last_cursor {big} NOT NULL,
                item_count INTEGER NOT NULL,
                duplicate_count INTEGER NOT NULL,
                retry_count INTEGER NOT NULL,
                receive_time_us {big} NOT NULL,
                recorded {recorded},
                PRIMARY KEY (tenant_id, user_id, first_cursor)
            )""",
                "CREATE INDEX outbox_receipts_pending ON outbox_receipts (tenant_id, user_id) "
                f"WHERE {_not_recorded(dialect)}",
            ),
        ),
    )


def _item_row(stored: StoredItem) -> tuple[Any, ...]:
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


def _stored_of_row(row: Sequence[Any]) -> StoredItem:
    cursor, item_id, kind, key, version, tombstone, ciphertext, create_us = row
    item = MirrorItem(
        item_id, kind, key, int(version), bool(tombstone), bytes(ciphertext), int(create_us)
    )
    return StoredItem(int(cursor), item)


def _receipt_of_row(row: Sequence[Any]) -> Receipt:
    device_id, first, last, count, duplicates, retries, receive_us = row
    return Receipt(
        device_id, int(first), int(last), int(count), int(duplicates), int(retries), int(receive_us)
    )


async def _head_cursor(tx: SqlTx, who: tuple[str, str]) -> int:
    row = await tx.fetchone(
        "SELECT COALESCE(MAX(cursor), 0) FROM outbox_items WHERE tenant_id = ? AND user_id = ?", who
    )
    return int(row[0]) if row else 0


class SqlMirrorStore:
    """The mirror store over one engine database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @classmethod
    async def open(cls, storage_url: str, data_dir: Path) -> SqlMirrorStore:
        return cls(await open_database(storage_url, ENGINE, migrations_for, data_dir))

    async def push(self, tenant_id: str, user_id: str, batch: PushBatch) -> PushPlan:
        who = (tenant_id, user_id)
        ids = sorted({item.item_id for item in batch.items})
        keys = sorted({(item.item_kind, item.logical_key) for item in batch.items})
        async with self._db.write(tenant_id, user_id) as tx:
            head = await _head_cursor(tx, who)
            existing: dict[str, tuple[int, bytes]] = {}
            heads: dict[tuple[str, str], Head] = {}
            if ids:
                rows = await tx.fetchall(
                    "SELECT item_id, cursor, content_hash FROM outbox_items WHERE tenant_id = ? AND user_id = ? "
                    f"AND item_id IN ({marks(len(ids))})",
                    (*who, *ids),
                )
                existing = {
                    item_id: (int(cursor), bytes(content)) for item_id, cursor, content in rows
                }
                # Two IN lists rather than a join with a VALUES list: the join was planned as
                # a nested scan of the user's heads whenever statistics lagged a bulk load.
                kinds, logical_keys = (
                    sorted({kind for kind, _ in keys}),
                    sorted({key for _, key in keys}),
                )
                rows = await tx.fetchall(
                    "SELECT item_kind, logical_key, version, cursor FROM mirror_heads WHERE tenant_id = ? "
                    f"AND user_id = ? AND item_kind IN ({marks(len(kinds))}) "
                    f"AND logical_key IN ({marks(len(logical_keys))})",
                    (*who, *kinds, *logical_keys),
                )
                wanted = set(keys)
                heads = {
                    (k, lk): Head(k, lk, int(v), int(c))
                    for k, lk, v, c in rows
                    if (k, lk) in wanted
                }
            plan = plan_push(head, batch, existing, heads)
            if plan.inserts:
                await tx.executemany(
                    f"INSERT INTO outbox_items (tenant_id, user_id, {ITEM_COLUMNS}, content_hash) "
                    f"VALUES ({marks(11)})",
                    [(*who, *_item_row(stored)) for stored in plan.inserts],
                )
            if plan.heads:
                await tx.executemany(
                    "INSERT INTO mirror_heads (tenant_id, user_id, item_kind, logical_key, version, cursor) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, item_kind, logical_key) "
                    "DO UPDATE SET version = excluded.version, cursor = excluded.cursor",
                    [(*who, h.item_kind, h.logical_key, h.version, h.cursor) for h in plan.heads],
                )
            if plan.receipt is not None:
                r = plan.receipt
                await tx.execute(
                    f"INSERT INTO outbox_receipts (tenant_id, user_id, {RECEIPT_COLUMNS}) VALUES ({marks(9)})",
                    (
                        *who,
                        r.device_id,
                        r.first_cursor,
                        r.last_cursor,
                        r.item_count,
                        r.duplicate_count,
                        r.retry_count,
                        r.receive_time_us,
                    ),
                )
        return plan

    async def forget(
        self, tenant_id: str, user_id: str, item_kind: str, keys: Sequence[str], now_us: int
    ) -> ForgetPlan:
        """Drop every stored version of the artifacts (their ciphertext holds what was said)
        and write a tombstone above each; with no `item_kind`, every artifact of the user.
        An artifact already ending in a server tombstone with nothing after it is left alone."""
        who = (tenant_id, user_id)
        async with self._db.write(tenant_id, user_id) as tx:
            # Taken before anything is dropped: a cursor is never given out twice.
            top = await _head_cursor(tx, who)
            if item_kind:
                rows = (
                    await tx.fetchall(
                        "SELECT item_kind, logical_key, version, cursor FROM mirror_heads WHERE tenant_id = ? "
                        f"AND user_id = ? AND item_kind = ? AND logical_key IN ({marks(len(keys))})",
                        (*who, item_kind, *keys),
                    )
                    if keys
                    else []
                )
                targets = [(item_kind, key) for key in keys]
            else:
                rows = await tx.fetchall(
                    "SELECT item_kind, logical_key, version, cursor FROM mirror_heads WHERE tenant_id = ? "
                    "AND user_id = ?",
                    who,
                )
                targets = [(str(k), str(lk)) for k, lk, _, _ in rows]
            heads = {
                (str(k), str(lk)): Head(str(k), str(lk), int(v), int(c)) for k, lk, v, c in rows
            }
            if not targets:
                return ForgetPlan([], [])
            kinds = sorted({k for k, _ in targets})
            logical = sorted({lk for _, lk in targets})
            stored = await tx.fetchall(
                "SELECT cursor, item_kind, logical_key, item_id, tombstone FROM outbox_items WHERE tenant_id = ? "
                f"AND user_id = ? AND item_kind IN ({marks(len(kinds))}) "
                f"AND logical_key IN ({marks(len(logical))})",
                (*who, *kinds, *logical),
            )
            wanted = set(targets)
            by_key: dict[tuple[str, str], list[tuple[int, str, bool]]] = {}
            for cursor, kind, key, item_id, tombstone in stored:
                if (str(kind), str(key)) in wanted:
                    by_key.setdefault((str(kind), str(key)), []).append(
                        (int(cursor), str(item_id), bool(tombstone))
                    )
            done = {
                key
                for key, items in by_key.items()
                if len(items) == 1 and items[0][2] and items[0][1].startswith(FORGET_ITEM_PREFIX)
            }
            todo = [t for t in targets if t not in done]
            gone = [c for key in todo for c, _, _ in by_key.get(key, [])]
            for start in range(0, len(gone), 500):
                chunk = gone[start : start + 500]
                await tx.execute(
                    f"DELETE FROM outbox_items WHERE tenant_id = ? AND user_id = ? AND cursor IN ({marks(len(chunk))})",
                    (*who, *chunk),
                )
            plan = plan_forget(top, todo, heads, now_us)
            if plan.inserts:
                await tx.executemany(
                    f"INSERT INTO outbox_items (tenant_id, user_id, {ITEM_COLUMNS}, content_hash) "
                    f"VALUES ({marks(11)})",
                    [(*who, *_item_row(item)) for item in plan.inserts],
                )
                await tx.executemany(
                    "INSERT INTO mirror_heads (tenant_id, user_id, item_kind, logical_key, version, cursor) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, item_kind, logical_key) "
                    "DO UPDATE SET version = excluded.version, cursor = excluded.cursor",
                    [(*who, h.item_kind, h.logical_key, h.version, h.cursor) for h in plan.heads],
                )
        return plan

    async def pending_receipts(self, tenant_id: str, user_id: str) -> list[Receipt]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {RECEIPT_COLUMNS} FROM outbox_receipts WHERE tenant_id = ? AND user_id = ? "
                f"AND {_not_recorded(tx.dialect)} ORDER BY first_cursor",
                (tenant_id, user_id),
            )
        return [_receipt_of_row(row) for row in rows]

    async def mark_recorded(
        self, tenant_id: str, user_id: str, first_cursors: Sequence[int]
    ) -> None:
        if not first_cursors:
            return
        async with self._db.write(tenant_id, user_id) as tx:
            await tx.executemany(
                "UPDATE outbox_receipts SET recorded = ? WHERE tenant_id = ? AND user_id = ? AND first_cursor = ?",
                [(True, tenant_id, user_id, cursor) for cursor in first_cursors],
            )

    async def pull(
        self, tenant_id: str, user_id: str, after_cursor: int, limit: int
    ) -> list[StoredItem]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {ITEM_COLUMNS} FROM outbox_items WHERE tenant_id = ? AND user_id = ? AND cursor > ? "
                "ORDER BY cursor LIMIT ?",
                (tenant_id, user_id, after_cursor, limit),
            )
        return [_stored_of_row(row) for row in rows]

    async def head_cursor(self, tenant_id: str, user_id: str) -> int:
        async with self._db.read() as tx:
            return await _head_cursor(tx, (tenant_id, user_id))

    async def restore_page(
        self, tenant_id: str, user_id: str, as_of: int, after_cursor: int, limit: int
    ) -> list[StoredItem]:
        # Two steps (head cursors, then their items by primary key) keep the plan an index
        # lookup even when statistics lag a bulk load; a join was planned as a nested scan.
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT cursor FROM mirror_heads WHERE tenant_id = ? AND user_id = ? "
                "AND cursor > ? AND cursor <= ? ORDER BY cursor LIMIT ?",
                (tenant_id, user_id, after_cursor, as_of, limit),
            )
            cursors = [int(row[0]) for row in rows]
            if not cursors:
                return []
            rows = await tx.fetchall(
                f"SELECT {ITEM_COLUMNS} FROM outbox_items WHERE tenant_id = ? AND user_id = ? "
                f"AND cursor >= ? AND cursor <= ? AND cursor IN ({marks(len(cursors))}) ORDER BY cursor",
                (tenant_id, user_id, cursors[0], cursors[-1], *cursors),
            )
        return [_stored_of_row(row) for row in rows]

    async def close(self) -> None:
        await self._db.close()
