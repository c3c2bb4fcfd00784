"""One SQL store for every engine: the same SQL text on SQLite and PostgreSQL.

Engines write their SQL once with "?" placeholders (never a literal "?" or "%" in the
text) and run it through a `SqlTx`; the `Database` gives transactions serialised per
lock key and hides the dialect. Schema differences are the few type names of `Dialect`.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import psycopg
from psycopg import AsyncConnection
from psycopg import sql as pg_sql
from psycopg_pool import AsyncConnectionPool

from memmesh.errors import FieldViolation, InvalidInput
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool
from memmesh.storage.sqlite_db import open_sqlite

Row = tuple[Any, ...]
T = TypeVar("T")
log = logging.getLogger(__name__)


class Dialect(enum.Enum):
    """The SQL dialect under a store; only DDL differs between them."""

    SQLITE = "sqlite"
    POSTGRES = "postgres"

    @property
    def big_int(self) -> str:
        """The 64-bit integer column type."""
        return "INTEGER" if self is Dialect.SQLITE else "BIGINT"

    @property
    def blob(self) -> str:
        """The byte-string column type."""
        return "BLOB" if self is Dialect.SQLITE else "BYTEA"


MigrationsFor = Callable[[Dialect], Sequence[Migration]]


class SqlTx(Protocol):
    """The calls a store's SQL needs inside one transaction (or one read)."""

    dialect: Dialect

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; the number of rows it changed."""
        ...

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None: ...

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...


class Database(Protocol):
    """An engine's database: transactions, reads, and closing."""

    dialect: Dialect

    def write(self, *lock_key: str) -> AbstractAsyncContextManager[SqlTx]:
        """A transaction serialised with every other writer holding the same lock key
        (across processes too); committed on exit, rolled back on an exception."""
        ...

    def read(self) -> AbstractAsyncContextManager[SqlTx]:
        """Reads of committed data, never of another transaction half done."""
        ...

    async def reclaim_erased(self, tables: Sequence[str]) -> bool:
        """After an erasure, make the deleted bytes unreadable where the store can: SQLite
        (secure_delete already zeroes freed pages) checkpoints and truncates its WAL, which
        still holds the old page images; PostgreSQL runs VACUUM on the given tables of the
        engine's schema, outside any transaction. Best effort: a failure or a busy reader is
        logged and reported as False, never raised (the erasure itself has committed)."""
        ...

    async def close(self) -> None: ...


def marks(count: int) -> str:
    """`count` comma-separated placeholders, for IN (…) lists."""
    return ",".join("?" * count)


# How long a statement waits for another process's lock on the file before failing, and
# the longest pause between two tries (the loop keeps serving other calls meanwhile).
SQLITE_LOCK_WAIT_S = 5.0
_SQLITE_MAX_PAUSE_S = 0.05


def _is_busy(error: sqlite3.OperationalError) -> bool:
    # The extended code carries the primary one in its low byte (SQLITE_BUSY_SNAPSHOT, …).
    return (error.sqlite_errorcode & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _no_nul(params: Sequence[Any]) -> Sequence[Any]:
    """The parameters, refused when a text holds NUL: PostgreSQL text cannot store it and
    SQLite would keep it, so both backends refuse it alike, as bad input (requests are
    refused at the edge already; this is the store's own guard)."""
    for value in params:
        if type(value) is str and "\x00" in value:
            raise InvalidInput(
                [FieldViolation("request", "holds a NUL character, which no store keeps")]
            )
    return params


def _no_nul_rows(rows: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
    for row in rows:
        _no_nul(row)
    return rows


class _SqliteTx:
    dialect = Dialect.SQLITE

    def __init__(self, database: SqliteDatabase) -> None:
        self._database = database

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        _no_nul(params)
        return await self._database.run(lambda db: db.execute(sql, params).rowcount)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        _no_nul(params)
        return await self._database.run(lambda db: db.execute(sql, params).fetchall())

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        _no_nul(params)
        row: Row | None = await self._database.run(lambda db: db.execute(sql, params).fetchone())
        return row

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        rows = _no_nul_rows(list(rows))
        await self._database.run(lambda db: db.executemany(sql, rows))


class SqliteDatabase:
    """One connection whose statements run on the event loop: each is a short local call,
    far cheaper than a hop to a worker thread. The connection never waits inside SQLite
    for another process's lock (busy_timeout 0): a busy statement did nothing, so it is
    retried after an asyncio sleep, and the loop keeps serving meanwhile. An asyncio lock
    keeps this process's transactions apart; BEGIN IMMEDIATE serialises writers across
    processes sharing the file."""

    dialect = Dialect.SQLITE

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._db.execute("PRAGMA busy_timeout=0")
        self._lock = asyncio.Lock()
        self._tx = _SqliteTx(self)

    @classmethod
    def open(cls, path: Path, migrations: Sequence[Migration]) -> SqliteDatabase:
        return cls(open_sqlite(path, migrations))

    async def run(self, call: Callable[[sqlite3.Connection], T]) -> T:
        """Run one call on the connection, retrying while another process holds the lock."""
        try:
            return call(self._db)
        except sqlite3.OperationalError as error:
            if not _is_busy(error):
                raise
        loop = asyncio.get_running_loop()
        give_up = loop.time() + SQLITE_LOCK_WAIT_S
        pause = 0.001
        while True:
            await asyncio.sleep(pause)
            try:
                return call(self._db)
            except sqlite3.OperationalError as error:
                if not _is_busy(error) or loop.time() >= give_up:
                    raise
            pause = min(pause * 2, _SQLITE_MAX_PAUSE_S)

    @asynccontextmanager
    async def write(self, *lock_key: str) -> AsyncIterator[SqlTx]:
        async with self._lock:
            await self.run(lambda db: db.execute("BEGIN IMMEDIATE"))
            try:
                yield self._tx
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            await self.run(lambda db: db.execute("COMMIT"))

    @asynccontextmanager
    async def read(self) -> AsyncIterator[SqlTx]:
        async with self._lock:
            yield self._tx

    async def reclaim_erased(self, tables: Sequence[str]) -> bool:
        async with self._lock:
            try:
                row = await self.run(
                    lambda db: db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                )
            except sqlite3.Error:
                log.warning("WAL checkpoint after an erasure failed", exc_info=True)
                return False
        # (busy, frames in the WAL, frames checkpointed): busy means a reader of another
        # process kept part of the WAL; the next erasure's checkpoint takes it.
        if row is None or int(row[0]) != 0:
            log.warning("WAL checkpoint after an erasure was blocked by a reader")
            return False
        return True

    async def close(self) -> None:
        self._db.close()


@lru_cache(maxsize=1024)
def _postgres_sql(sql: str) -> str:
    # The shared SQL uses "?" placeholders and never a literal "?" or "%".
    return sql.replace("?", "%s")


class _PostgresTx:
    dialect = Dialect.POSTGRES

    def __init__(self, connection: AsyncConnection) -> None:
        self._db = connection

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        cursor = await self._db.execute(_postgres_sql(sql), _no_nul(params))
        return cursor.rowcount

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cursor = await self._db.execute(_postgres_sql(sql), _no_nul(params))
        return await cursor.fetchall()

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        cursor = await self._db.execute(_postgres_sql(sql), _no_nul(params))
        return await cursor.fetchone()

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        rows = _no_nul_rows(list(rows))
        async with self._db.cursor() as cursor:
            await cursor.executemany(_postgres_sql(sql), rows)


class PostgresDatabase:
    """A connection pool on the engine's schema; writers holding the same lock key
    serialise on a transaction-scoped advisory lock, across any number of processes."""

    dialect = Dialect.POSTGRES

    def __init__(self, pool: AsyncConnectionPool, schema: str) -> None:
        self._pool = pool
        self._schema = schema

    @classmethod
    async def open(cls, url: str, schema: str, migrations: Sequence[Migration]) -> PostgresDatabase:
        return cls(await open_pool(url, schema, migrations), schema)

    @asynccontextmanager
    async def write(self, *lock_key: str) -> AsyncIterator[SqlTx]:
        async with self._pool.connection() as connection, connection.transaction():
            if lock_key:
                await connection.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    ("\x1f".join((self._schema, *lock_key)),),
                )
            yield _PostgresTx(connection)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[SqlTx]:
        async with self._pool.connection() as connection:
            yield _PostgresTx(connection)

    async def reclaim_erased(self, tables: Sequence[str]) -> bool:
        # Pool connections are in autocommit, so VACUUM runs outside a transaction.
        done = True
        for table in dict.fromkeys(tables):
            statement = pg_sql.SQL("VACUUM {}.{}").format(
                pg_sql.Identifier(self._schema), pg_sql.Identifier(table)
            )
            try:
                async with self._pool.connection() as connection:
                    await connection.execute(statement)
            except psycopg.Error:
                log.warning(
                    "VACUUM of %s.%s after an erasure failed", self._schema, table, exc_info=True
                )
                done = False
        return done

    async def close(self) -> None:
        await self._pool.close()


async def open_database(
    storage_url: str, engine: str, migrations: MigrationsFor, data_dir: Path = Path("var/data")
) -> Database:
    """The engine's database: an SQLite file under data_dir for "sqlite", else a
    PostgreSQL schema named after the engine; pending migrations applied."""
    match storage_url:
        case "sqlite":
            return SqliteDatabase.open(data_dir / f"{engine}.sqlite3", migrations(Dialect.SQLITE))
        case url if url.startswith(("postgresql://", "postgres://")):
            return await PostgresDatabase.open(url, engine, migrations(Dialect.POSTGRES))
        case other:
            raise ValueError(f"unsupported storage_url {other!r}")
