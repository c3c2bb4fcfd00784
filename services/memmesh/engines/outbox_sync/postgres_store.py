"""The cloud mirror in PostgreSQL (schema `outbox_sync`)."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg_pool import AsyncConnectionPool

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
from memmesh.storage.postgres_db import open_pool

SCHEMA = "outbox_sync"

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE outbox_items (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                cursor BIGINT NOT NULL,
                item_id TEXT NOT NULL,
                item_kind TEXT NOT NULL,
                logical_key TEXT NOT NULL,
                version BIGINT NOT NULL,
                tombstone SMALLINT NOT NULL,
                ciphertext BYTEA NOT NULL,
                create_time_us BIGINT NOT NULL,
                content_hash BYTEA NOT NULL,
                PRIMARY KEY (tenant_id, user_id, cursor),
                UNIQUE (tenant_id, user_id, item_id)
            )""",
            """CREATE TABLE mirror_heads (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                item_kind TEXT NOT NULL,
                logical_key TEXT NOT NULL,
                version BIGINT NOT NULL,
                cursor BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, item_kind, logical_key)
            )""",
            "CREATE INDEX mirror_heads_by_cursor ON mirror_heads (tenant_id, user_id, cursor)",
            """CREATE TABLE outbox_receipts (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                first_cursor BIGINT NOT NULL,
                last_cursor BIGINT NOT NULL,
                item_count INTEGER NOT NULL,
                duplicate_count INTEGER NOT NULL,
                retry_count INTEGER NOT NULL,
                receive_time_us BIGINT NOT NULL,
                recorded BOOLEAN NOT NULL DEFAULT FALSE,
                PRIMARY KEY (tenant_id, user_id, first_cursor)
            )""",
            "CREATE INDEX outbox_receipts_pending ON outbox_receipts (tenant_id, user_id) WHERE NOT recorded",
        ),
    ),
)

class PostgresMirrorStore:
    """Pushes of one user serialise on a transaction-scoped advisory lock, so cursors
    stay gapless across any number of engine processes."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema: str = SCHEMA) -> PostgresMirrorStore:
        return cls(await open_pool(url, schema, MIGRATIONS))

    async def push(self, tenant_id: str, user_id: str, batch: PushBatch) -> PushPlan:
        who = (tenant_id, user_id)
        ids = sorted({item.item_id for item in batch.items})
        keys = sorted({(item.item_kind, item.logical_key) for item in batch.items})
        async with self._pool.connection() as connection, connection.transaction():
            await connection.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (f"{tenant_id}\x1f{user_id}",)
            )
            cursor = await connection.execute(
                "SELECT COALESCE(MAX(cursor), 0) FROM outbox_items WHERE tenant_id = %s AND user_id = %s", who
            )
            head = (await cursor.fetchone())[0]  # type: ignore[index]
            cursor = await connection.execute(
                "SELECT item_id, cursor, content_hash FROM outbox_items "
                "WHERE tenant_id = %s AND user_id = %s AND item_id = ANY(%s)",
                (*who, ids),
            )
            existing = {item_id: (int(c), bytes(content)) for item_id, c, content in await cursor.fetchall()}
            cursor = await connection.execute(
                "SELECT item_kind, logical_key, version, cursor FROM mirror_heads "
                "WHERE tenant_id = %s AND user_id = %s AND (item_kind, logical_key) IN "
                "(SELECT * FROM unnest(%s::text[], %s::text[]))",
                (*who, [kind for kind, _ in keys], [key for _, key in keys]),
            )
            heads = {(k, lk): Head(k, lk, int(v), int(c)) for k, lk, v, c in await cursor.fetchall()}
            plan = plan_push(int(head), batch, existing, heads)
            async with connection.cursor() as writer:
                if plan.inserts:
                    await writer.executemany(
                        f"INSERT INTO outbox_items (tenant_id, user_id, {ITEM_COLUMNS}, content_hash) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        [(*who, *item_row(stored)) for stored in plan.inserts],
                    )
                if plan.heads:
                    await writer.executemany(
                        "INSERT INTO mirror_heads (tenant_id, user_id, item_kind, logical_key, version, cursor) "
                        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, user_id, item_kind, logical_key) "
                        "DO UPDATE SET version = excluded.version, cursor = excluded.cursor",
                        [(*who, h.item_kind, h.logical_key, h.version, h.cursor) for h in plan.heads],
                    )
                if plan.receipt is not None:
                    r = plan.receipt
                    await writer.execute(
                        f"INSERT INTO outbox_receipts (tenant_id, user_id, {RECEIPT_COLUMNS}) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (*who, r.device_id, r.first_cursor, r.last_cursor, r.item_count, r.duplicate_count,
                         r.retry_count, r.receive_time_us),
                    )
        return plan

    async def pending_receipts(self, tenant_id: str, user_id: str) -> list[Receipt]:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                f"SELECT {RECEIPT_COLUMNS} FROM outbox_receipts WHERE tenant_id = %s AND user_id = %s "
                "AND NOT recorded ORDER BY first_cursor",
                (tenant_id, user_id),
            )
            return [receipt_of_row(row) for row in await cursor.fetchall()]

    async def mark_recorded(self, tenant_id: str, user_id: str, first_cursors: Sequence[int]) -> None:
        async with self._pool.connection() as connection:
            await connection.execute(
                "UPDATE outbox_receipts SET recorded = TRUE WHERE tenant_id = %s AND user_id = %s "
                "AND first_cursor = ANY(%s)",
                (tenant_id, user_id, list(first_cursors)),
            )

    async def pull(self, tenant_id: str, user_id: str, after_cursor: int, limit: int) -> list[StoredItem]:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                f"SELECT {ITEM_COLUMNS} FROM outbox_items WHERE tenant_id = %s AND user_id = %s AND cursor > %s "
                "ORDER BY cursor LIMIT %s",
                (tenant_id, user_id, after_cursor, limit),
            )
            return [stored_of_row(row) for row in await cursor.fetchall()]

    async def head_cursor(self, tenant_id: str, user_id: str) -> int:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                "SELECT COALESCE(MAX(cursor), 0) FROM outbox_items WHERE tenant_id = %s AND user_id = %s",
                (tenant_id, user_id),
            )
            return int((await cursor.fetchone())[0])  # type: ignore[index]

    async def restore_page(
        self, tenant_id: str, user_id: str, as_of: int, after_cursor: int, limit: int
    ) -> list[StoredItem]:
        # Two steps (head cursors, then their items by primary key) keep the plan an index
        # lookup even when statistics lag a bulk load; a join was planned as a nested scan.
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                "SELECT cursor FROM mirror_heads WHERE tenant_id = %s AND user_id = %s "
                "AND cursor > %s AND cursor <= %s ORDER BY cursor LIMIT %s",
                (tenant_id, user_id, after_cursor, as_of, limit),
            )
            cursors = [int(row[0]) for row in await cursor.fetchall()]
            if not cursors:
                return []
            cursor = await connection.execute(
                f"SELECT {ITEM_COLUMNS} FROM outbox_items WHERE tenant_id = %s AND user_id = %s "
                "AND cursor >= %s AND cursor <= %s AND cursor = ANY(%s) ORDER BY cursor",
                (tenant_id, user_id, cursors[0], cursors[-1], cursors),
            )
            return [stored_of_row(row) for row in await cursor.fetchall()]

    async def close(self) -> None:
        await self._pool.close()
