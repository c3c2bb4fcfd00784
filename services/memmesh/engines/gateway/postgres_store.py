"""The extraction retry queue in PostgreSQL (schema `gateway`)."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from memmesh.engines.gateway.store import PendingExtraction
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool

SCHEMA = "gateway"

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE pending_extractions (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                turn_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                text TEXT NOT NULL,
                time_us BIGINT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_us BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant_id, user_id, turn_id)
            )""",
            "CREATE INDEX pending_extractions_due ON pending_extractions (next_attempt_us)",
        ),
    ),
)

_COLUMNS = "tenant_id, user_id, turn_id, session_id, text, time_us, attempts, next_attempt_us"


class PostgresPendingStore:
    """Pooled connections; every statement is its own transaction (autocommit)."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema: str = SCHEMA) -> PostgresPendingStore:
        return cls(await open_pool(url, schema, MIGRATIONS, max_size=4))

    async def _execute(self, statement: str, params: tuple[object, ...]) -> list[tuple[object, ...]]:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(statement, params)  # type: ignore[arg-type]
            return await cursor.fetchall() if cursor.description else []

    async def add(self, item: PendingExtraction) -> None:
        await self._execute(
            f"INSERT INTO pending_extractions ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (item.tenant_id, item.user_id, item.turn_id, item.session_id, item.text, item.time_us, item.attempts, item.next_attempt_us),
        )

    async def remove(self, tenant_id: str, user_id: str, turn_id: str) -> None:
        await self._execute(
            "DELETE FROM pending_extractions WHERE tenant_id = %s AND user_id = %s AND turn_id = %s", (tenant_id, user_id, turn_id)
        )

    async def is_pending(self, tenant_id: str, user_id: str, turn_id: str) -> bool:
        rows = await self._execute(
            "SELECT 1 FROM pending_extractions WHERE tenant_id = %s AND user_id = %s AND turn_id = %s", (tenant_id, user_id, turn_id)
        )
        return bool(rows)

    async def due(self, now_us: int, limit: int) -> list[PendingExtraction]:
        rows = await self._execute(
            f"SELECT {_COLUMNS} FROM pending_extractions WHERE next_attempt_us <= %s "
            "ORDER BY next_attempt_us, time_us, turn_id LIMIT %s",
            (now_us, limit),
        )
        return [PendingExtraction(*row) for row in rows]  # type: ignore[arg-type]

    async def reschedule(self, tenant_id: str, user_id: str, turn_id: str, attempts: int, next_attempt_us: int) -> None:
        await self._execute(
            "UPDATE pending_extractions SET attempts = %s, next_attempt_us = %s "
            "WHERE tenant_id = %s AND user_id = %s AND turn_id = %s",
            (attempts, next_attempt_us, tenant_id, user_id, turn_id),
        )

    async def count(self, tenant_id: str, user_id: str) -> int:
        rows = await self._execute(
            "SELECT COUNT(*) FROM pending_extractions WHERE tenant_id = %s AND user_id = %s", (tenant_id, user_id)
        )
        return int(rows[0][0])  # type: ignore[call-overload]

    async def close(self) -> None:
        await self._pool.close()
