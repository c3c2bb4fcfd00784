"""One SQL store for every engine: the same SQL text on SQLite and PostgreSQL.

Engines write their SQL once with "?" placeholders (never a literal "?" or "%" in the
text) and run it through a `SqlTx`; the `Database` gives transactions serialised per
lock key and hides the dialect. Schema differences are the few type names of `Dialect`.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
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

    @property
    def bytewise(self) -> str:
        """The collation suffix that orders keys and ids byte by byte on both dialects
        (SQLite's BINARY is its default)."""
        return "" if self is Dialect.SQLITE else ' COLLATE "C"'


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
        truncates its WAL, which still holds the old page images, at once and has the file
        rebuilt (VACUUM) in the background within 5 minutes; PostgreSQL has the
        given tables of the engine's schema rewritten within about 5 s, in the
        background (as `reclaim_deleted_soon`). Best effort: a failure is logged and
        reported as False, never raised (the erasure has committed)."""
        ...

    def reclaim_deleted_soon(self, table: str) -> None:
        """Rows just deleted from this table (not an erasure: e.g. delivered outbox
        effects, which carried the user's words) leave no bytes in its files for long:
        PostgreSQL rewrites the table in the background (VACUUM FULL: new files holding
        only the live rows, indexes and TOAST rebuilt, the old files unlinked), at most
        once per `DELETED_REWRITE_INTERVAL_S` and once more on close; SQLite's
        secure_delete already zeroes them."""
        ...

    async def close(self) -> None: ...


def marks(count: int) -> str:
    """`count` comma-separated placeholders, for IN (…) lists."""
    return ",".join("?" * count)


# A rebuild holds the file's write lock while it rewrites the whole file (about 70 ms for
# 7 MB, seconds on a loaded machine), and the writes of the forgets that follow wait
# behind it, so it runs rarely: what it removes (stale cells in rebalanced pages) is rare
# and unreadable through SQL, while the WAL, which every reader can replay, is truncated
# at once.
SQLITE_REBUILD_INTERVAL_S = 300.0
# The serving connection never checkpoints its WAL itself (wal_autocheckpoint=0): a
# checkpoint writes pages back into the file and fsyncs it, which on a busy disk can take
# a second, and statements run on the event loop, so every call the engine serves would
# wait for it. A worker thread checkpoints instead, on a connection of its own (PASSIVE: it
# never waits for, nor blocks, this connection's readers and writer), at most once per
# interval while writes come; the WAL holds at most about an interval's writes.
SQLITE_CHECKPOINT_INTERVAL_S = 1.0
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


# Passes a close may make when the last one could not finish (a table lock held by work
# still ending): deleted bytes left at shutdown would wait for the next deletion after a
# restart, however long that is.
CLOSING_PASSES = 5
_CLOSING_PAUSE_S = 0.2


class _Paced:
    """Background passes of `work`: at most one per `interval_s` while asked for, and, on
    close, without the wait, until one finishes (at most CLOSING_PASSES). A pass that could
    not finish is asked for again."""

    def __init__(self, work: Callable[[], Awaitable[bool]], interval_s: float) -> None:
        self._work = work
        self._interval_s = interval_s
        self._asked = False
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    def ask(self) -> None:
        self._asked = True
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._passes())

    async def _passes(self) -> None:
        closing_passes = 0
        while self._asked:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self._interval_s)
            self._asked = False
            try:
                done = await self._work()
            except Exception:
                log.warning("a background pass over the database failed", exc_info=True)
                done = False
            if self._closing.is_set():
                closing_passes += 1
                if closing_passes >= CLOSING_PASSES:
                    return
                if not done:
                    await asyncio.sleep(_CLOSING_PAUSE_S * closing_passes)
            if not done:
                self._asked = True

    async def close(self) -> None:
        self._closing.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


def _rebuild(path: Path) -> bool:
    """VACUUM the file, then checkpoint and truncate its WAL; False when a reader of
    another process held part of the WAL back (the next pass takes it)."""
    # secure_delete zeroes deleted cells and freed pages, but a page rebalanced by an
    # insert keeps stale copies of the cells it moved away in its unused gap, and those
    # outlive the rows' deletion. VACUUM writes every page afresh from the live rows.
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute(f"PRAGMA busy_timeout={int(SQLITE_LOCK_WAIT_S * 1000)}")
        connection.execute("PRAGMA secure_delete=ON")
        # VACUUM's working copy of the database stays in memory, never in a temporary file.
        connection.execute("PRAGMA temp_store=MEMORY")
        connection.execute("VACUUM")
        # (busy, frames in the WAL, frames checkpointed)
        row = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        connection.close()
    if row is None or int(row[0]) != 0:
        log.warning("WAL checkpoint after an erasure was blocked by a reader of %s", path.name)
        return False
    return True


def _checkpoint(path: Path) -> bool:
    """Copy what the WAL holds back into the file, as far as readers allow (PASSIVE)."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        connection.close()
    return True


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

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path,
        rebuild_interval_s: float = SQLITE_REBUILD_INTERVAL_S,
        checkpoint_interval_s: float = SQLITE_CHECKPOINT_INTERVAL_S,
    ) -> None:
        self._db = connection
        # On a connection of its own in a worker thread: this process's reads go on
        # meanwhile, and its writers wait for the file's lock as for any other writer.
        # One checkpoint of the file at a time from this process (the background one, a
        # rebuild's, an erasure's): SQLite answers a second one busy, and an erasure's
        # truncation must not be the one turned away.
        self._wal_lock = asyncio.Lock()
        self._rebuilds = _Paced(lambda: self._off_loop(_rebuild, path), rebuild_interval_s)
        self._checkpoints = _Paced(lambda: self._off_loop(_checkpoint, path), checkpoint_interval_s)
        self._db.execute("PRAGMA busy_timeout=0")
        self._db.execute("PRAGMA wal_autocheckpoint=0")
        self._lock = asyncio.Lock()
        self._tx = _SqliteTx(self)

    @classmethod
    def open(
        cls,
        path: Path,
        migrations: Sequence[Migration],
        rebuild_interval_s: float = SQLITE_REBUILD_INTERVAL_S,
        checkpoint_interval_s: float = SQLITE_CHECKPOINT_INTERVAL_S,
    ) -> SqliteDatabase:
        return cls(open_sqlite(path, migrations), path, rebuild_interval_s, checkpoint_interval_s)

    async def _off_loop(self, work: Callable[[Path], bool], path: Path) -> bool:
        async with self._wal_lock:
            return await asyncio.to_thread(work, path)

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
        self._checkpoints.ask()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[SqlTx]:
        async with self._lock:
            yield self._tx

    async def reclaim_erased(self, tables: Sequence[str]) -> bool:
        # The WAL's old page images go now; the file's rebuild follows in the background.
        self._rebuilds.ask()
        async with self._wal_lock, self._lock:
            try:
                row = await self.run(
                    lambda db: db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                )
            except sqlite3.Error:
                log.warning("WAL checkpoint after an erasure failed", exc_info=True)
                return False
        # (busy, frames in the WAL, frames checkpointed): busy means a reader of another
        # process kept part of the WAL; the rebuild's checkpoint takes it.
        if row is None or int(row[0]) != 0:
            log.warning("WAL checkpoint after an erasure was blocked by a reader")
            return False
        return True

    def reclaim_deleted_soon(self, table: str) -> None:
        pass

    async def close(self) -> None:
        await self._checkpoints.close()
        await self._rebuilds.close()
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


# VACUUM FULL holds an ACCESS EXCLUSIVE lock while it rewrites (about 30 ms for 10k rows
# of 400 bytes), and readers arriving while it waits for the lock queue behind it: the
# lock timeout bounds that wait, and a table that stays busy is tried again a little later.
REWRITE_LOCK_TIMEOUT_MS = 50
REWRITE_ATTEMPTS = 3
# How long a rewrite waits for snapshots older than it to end (reads take milliseconds).
_SNAPSHOT_WAIT_S = 1.0
# How often a table with deletions (erased rows, delivered outbox effects) is rewritten
# at most: one pass per interval however many deletions came, since each rewrite briefly
# locks its table against the writes of the forgets that follow.
DELETED_REWRITE_INTERVAL_S = 5.0
_REWRITE_PAUSE_S = 0.2


async def _older_snapshots_gone(connection: AsyncConnection) -> None:
    """Wait, at most `_SNAPSHOT_WAIT_S`, until every transaction of the server running now
    has ended and no other session of the database holds a snapshot taken before now: a
    rewrite keeps each deleted row such a snapshot may still see, and its own snapshot's
    horizon is the oldest transaction still running anywhere on the server."""
    cursor = await connection.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text")
    row = await cursor.fetchone()
    if row is None:
        return
    now = row[0]
    give_up = asyncio.get_running_loop().time() + _SNAPSHOT_WAIT_S
    while asyncio.get_running_loop().time() < give_up:
        cursor = await connection.execute(
            "SELECT pg_snapshot_xmin(pg_current_snapshot()) >= %s::xid8 AND NOT EXISTS ("
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL "
            "AND age(backend_xmin) > age(xid(%s::xid8)))",
            (now, now),
        )
        settled = await cursor.fetchone()
        if settled is None or settled[0]:
            return
        await asyncio.sleep(0.02)


async def _rewritten(connection: AsyncConnection, table: pg_sql.Identifier) -> bool:
    """Rewrite the table under a lock timeout; False when its lock stayed taken."""
    await _older_snapshots_gone(connection)
    await connection.execute(
        "SELECT set_config('lock_timeout', %s, false)", (f"{REWRITE_LOCK_TIMEOUT_MS}ms",)
    )
    try:
        for attempt in range(REWRITE_ATTEMPTS):
            if attempt:
                await asyncio.sleep(_REWRITE_PAUSE_S * attempt)
            try:
                await connection.execute(pg_sql.SQL("VACUUM FULL {}").format(table))
                return True
            except psycopg.errors.LockNotAvailable:
                continue
        return False
    finally:
        await connection.execute("RESET lock_timeout")


class PostgresDatabase:
    """A connection pool on the engine's schema; writers holding the same lock key
    serialise on a transaction-scoped advisory lock, across any number of processes."""

    dialect = Dialect.POSTGRES

    def __init__(
        self,
        pool: AsyncConnectionPool,
        schema: str,
        rewrite_interval_s: float = DELETED_REWRITE_INTERVAL_S,
    ) -> None:
        self._pool = pool
        self._schema = schema
        # Tables with deletions not yet rewritten, and the passes that rewrite them.
        self._deleted_from: set[str] = set()
        self._rewrites = _Paced(self._rewrite_deleted, rewrite_interval_s)

    @classmethod
    async def open(
        cls,
        url: str,
        schema: str,
        migrations: Sequence[Migration],
        rewrite_interval_s: float = DELETED_REWRITE_INTERVAL_S,
    ) -> PostgresDatabase:
        return cls(await open_pool(url, schema, migrations), schema, rewrite_interval_s)

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
        # A rewrite locks its table against reads for its duration: it runs in the
        # background with the other deletions' rewrites, never in an erasure's answer.
        for table in tables:
            self.reclaim_deleted_soon(table)
        return True

    async def _rewrite(self, table: str) -> bool:
        """VACUUM FULL of one table; plain VACUUM when its lock stays taken."""
        # Plain VACUUM only marks dead tuples free: their bytes stay in the pages until
        # reused. A rewrite copies the live rows to new files and unlinks the old ones.
        name = pg_sql.Identifier(self._schema, table)
        # Pool connections are in autocommit, so VACUUM runs outside a transaction.
        async with self._pool.connection() as connection:
            try:
                if await _rewritten(connection, name):
                    return True
                log.warning(
                    "%s.%s stayed locked by other work; its deleted bytes wait for the next "
                    "rewrite (plain VACUUM meanwhile)",
                    self._schema,
                    table,
                )
                await connection.execute(pg_sql.SQL("VACUUM {}").format(name))
            except psycopg.Error:
                log.warning(
                    "rewriting %s.%s to reclaim deleted bytes failed",
                    self._schema,
                    table,
                    exc_info=True,
                )
        return False

    def reclaim_deleted_soon(self, table: str) -> None:
        self._deleted_from.add(table)
        self._rewrites.ask()

    async def _rewrite_deleted(self) -> bool:
        tables, self._deleted_from = sorted(self._deleted_from), set()
        done = True
        for table in tables:
            if not await self._rewrite(table):
                self._deleted_from.add(table)  # busy: the next pass tries again
                done = False
        return done

    async def close(self) -> None:
        await self._rewrites.close()
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
