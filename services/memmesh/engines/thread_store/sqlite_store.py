"""The ThreadStore in an SQLite file (the embedded default)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from memmesh.engines.thread_store.episode_rows import episode_schema
from memmesh.engines.thread_store.sql_tx import SqlUserTx, exposure_schema, schema
from memmesh.storage.migrations import Migration
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(1, schema("INTEGER")),
    Migration(2, episode_schema("INTEGER")),
    Migration(3, exposure_schema()),
)


class _SqliteExecutor:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, params).rowcount

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, params).fetchall()

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)


class SqliteThreadStore:
    """One connection; statements run on the event loop because each is a short local call,
    an asyncio lock keeps this process's transactions apart and BEGIN IMMEDIATE serialises
    writers across processes sharing the file."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._executor = _SqliteExecutor(connection)
        self._lock = asyncio.Lock()

    @classmethod
    def open(cls, path: Path) -> SqliteThreadStore:
        return cls(open_sqlite(path, MIGRATIONS))

    @asynccontextmanager
    async def write(self, tenant_id: str, user_id: str) -> AsyncIterator[SqlUserTx]:
        async with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield SqlUserTx(self._executor, tenant_id, user_id)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @asynccontextmanager
    async def read(self, tenant_id: str, user_id: str) -> AsyncIterator[SqlUserTx]:
        # Reads wait for a transaction of this process in progress, so they never see it half done.
        async with self._lock:
            yield SqlUserTx(self._executor, tenant_id, user_id)

    async def close(self) -> None:
        self._db.close()
