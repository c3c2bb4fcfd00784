"""The ThreadStore in PostgreSQL (schema `thread_store`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import lru_cache
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from memmesh.engines.thread_store.episode_rows import episode_schema
from memmesh.engines.thread_store.sql_tx import SqlUserTx, exposure_schema, schema
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool

SCHEMA = "thread_store"
MIGRATIONS = (
    Migration(1, schema("BIGINT")),
    Migration(2, episode_schema("BIGINT")),
    Migration(3, exposure_schema()),
)


@lru_cache(maxsize=256)
def _dialect(sql: str) -> str:
    # The shared SQL uses "?" placeholders and never a literal "?" or "%".
    return sql.replace("?", "%s")


class _PostgresExecutor:
    def __init__(self, connection: AsyncConnection) -> None:
        self._db = connection

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        cursor = await self._db.execute(_dialect(sql), params)  # type: ignore[arg-type]
        return cursor.rowcount

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = await self._db.execute(_dialect(sql), params)  # type: ignore[arg-type]
        return await cursor.fetchall()

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self._db.cursor() as cursor:
            await cursor.executemany(_dialect(sql), rows)  # type: ignore[arg-type]


class PostgresThreadStore:
    """Writers of one user serialise on a transaction-scoped advisory lock on the user, so the
    session rule and loop changes see every earlier turn, across any number of processes."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema_name: str = SCHEMA) -> PostgresThreadStore:
        return cls(await open_pool(url, schema_name, MIGRATIONS))

    @asynccontextmanager
    async def write(self, tenant_id: str, user_id: str) -> AsyncIterator[SqlUserTx]:
        async with self._pool.connection() as connection, connection.transaction():
            await connection.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"thread_store\x1f{tenant_id}\x1f{user_id}",)
            )
            yield SqlUserTx(_PostgresExecutor(connection), tenant_id, user_id)

    @asynccontextmanager
    async def read(self, tenant_id: str, user_id: str) -> AsyncIterator[SqlUserTx]:
        async with self._pool.connection() as connection:
            yield SqlUserTx(_PostgresExecutor(connection), tenant_id, user_id)

    async def close(self) -> None:
        await self._pool.close()
