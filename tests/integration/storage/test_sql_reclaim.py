"""After an erasure the SQL store leaves no byte of the deleted rows in its files: SQLite
truncates its WAL and rebuilds the file, PostgreSQL rewrites the table, in the background;
a table whose lock stays taken is left for the next pass instead of stalling its readers."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest

from memmesh.storage.migrations import Migration
from memmesh.storage.sql import (
    REWRITE_LOCK_TIMEOUT_MS,
    Dialect,
    PostgresDatabase,
    SqliteDatabase,
)

SECRET = b"Qyzorafumeta"
# Background passes this often here (the defaults are longer).
INTERVAL_S = 0.3
# Enough rows for SQLite to rebalance pages holding the secret; PostgreSQL needs fewer.
SQLITE_ROWS, PG_ROWS = 1500, 300


def migrations(dialect: Dialect) -> list[Migration]:
    return [
        Migration(
            1,
            (
                f"CREATE TABLE notes (owner TEXT NOT NULL, n {dialect.big_int} NOT NULL, "
                f"body {dialect.blob} NOT NULL, PRIMARY KEY (n, owner))",
                "CREATE INDEX notes_body ON notes (body)",
            ),
        )
    ]


async def _fill_then_forget(database: SqliteDatabase | PostgresDatabase, rows: int) -> None:
    """The secret's rows and kept rows interleaved, of varied sizes and inserted out of
    order, so inserts rebalance pages holding the secret; then the secret's rows go."""
    rng = random.Random(5)
    order = list(range(rows))
    rng.shuffle(order)
    for start in range(0, rows, 30):
        batch = []
        for n in order[start : start + 30]:
            batch.append(("secret", n, SECRET + bytes(rng.randint(10, 600))))
            batch.append(("kept", n, b"kept" + bytes(rng.randint(10, 600))))
        async with database.write("notes") as tx:
            await tx.executemany("INSERT INTO notes (owner, n, body) VALUES (?, ?, ?)", batch)
    async with database.write("notes") as tx:
        await tx.execute("DELETE FROM notes WHERE owner = ?", ("secret",))


def _sqlite_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


async def test_sqlite_reclaim_leaves_no_byte_of_a_deleted_row(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    database = SqliteDatabase.open(path, migrations(Dialect.SQLITE), INTERVAL_S)
    try:
        await _fill_then_forget(database, SQLITE_ROWS)
        # secure_delete and a truncated WAL alone: a rebalanced page's gap still holds it.
        checkpoint = sqlite3.connect(path)
        checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        checkpoint.close()
        assert SECRET in _sqlite_bytes(path)
        assert await database.reclaim_erased(["notes"])  # the WAL now, the file soon
        give_up = time.monotonic() + 10
        while SECRET in _sqlite_bytes(path) and time.monotonic() < give_up:
            await asyncio.sleep(0.1)
        assert SECRET not in _sqlite_bytes(path)
        async with database.read() as tx:
            row = await tx.fetchone("SELECT COUNT(*) FROM notes WHERE owner = ?", ("kept",))
        assert row == (SQLITE_ROWS,)
    finally:
        await database.close()


@pytest.fixture(scope="module")
def scratch_url(postgres_url: str) -> Iterator[str]:
    """A database of this module's own: a rewrite keeps deleted rows that a snapshot of
    another session of the same database may still see, and other suites share theirs."""
    name = f"reclaim_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{postgres_url.rpartition('/')[0]}/{name}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _open_scratch(url: str) -> tuple[PostgresDatabase, str]:
    """A database on a schema of its own in the module's scratch database."""
    schema = f"reclaim_{uuid.uuid4().hex[:10]}"
    return await PostgresDatabase.open(
        url, schema, migrations(Dialect.POSTGRES), INTERVAL_S
    ), schema


@pytest.fixture
async def postgres(scratch_url: str) -> AsyncIterator[tuple[PostgresDatabase, str]]:
    database, schema = await _open_scratch(scratch_url)
    yield database, schema
    await database.close()


async def _relation_bytes(url: str, schema: str) -> bytes:
    """The table's heap, TOAST and index files as PostgreSQL has them on disk."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
        await admin.execute("CHECKPOINT")
        cursor = await admin.execute(
            "SELECT pg_read_binary_file(pg_relation_filepath(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s "
            "OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = %s::regclass)",
            (schema, f'"{schema}".notes'),
        )
        return b"".join(bytes(row[0]) for row in await cursor.fetchall() if row[0] is not None)


async def _gone_from_files(url: str, schema: str, within_s: float = 10.0) -> bool:
    give_up = time.monotonic() + within_s
    while SECRET in await _relation_bytes(url, schema):
        if time.monotonic() > give_up:
            return False
        await asyncio.sleep(0.25)
    return True


@pytest.mark.postgres
async def test_postgres_reclaim_rewrites_the_table_without_the_deleted_rows(
    postgres: tuple[PostgresDatabase, str], scratch_url: str
) -> None:
    database, schema = postgres
    await _fill_then_forget(database, PG_ROWS)
    assert SECRET in await _relation_bytes(scratch_url, schema)  # dead tuples, until rewritten
    assert await database.reclaim_erased(["notes"])  # answers at once; the rewrite follows
    assert await _gone_from_files(scratch_url, schema)
    async with database.read() as tx:
        row = await tx.fetchone("SELECT COUNT(*) FROM notes WHERE owner = ?", ("kept",))
    assert row == (PG_ROWS,)


@pytest.mark.postgres
async def test_postgres_rewrite_waits_out_a_busy_table_without_stalling_its_readers(
    postgres: tuple[PostgresDatabase, str], scratch_url: str
) -> None:
    database, schema = postgres
    await _fill_then_forget(database, PG_ROWS)
    async with await psycopg.AsyncConnection.connect(scratch_url) as holder:
        # An open transaction that has read the table holds its lock against a rewrite.
        await holder.execute(f'SELECT COUNT(*) FROM "{schema}".notes')
        assert await database.reclaim_erased(["notes"])
        slowest = 0.0
        busy_until = time.monotonic() + INTERVAL_S + 1.2
        while time.monotonic() < busy_until:
            started = time.perf_counter()
            async with database.read() as tx:
                await tx.fetchone("SELECT COUNT(*) FROM notes WHERE owner = ?", ("kept",))
            slowest = max(slowest, time.perf_counter() - started)
            await asyncio.sleep(0.01)
        await holder.rollback()
    # A reader waits at most for the rewrite's lock timeout (plus a loaded machine's slack).
    assert slowest < REWRITE_LOCK_TIMEOUT_MS / 1000 + 0.75  # the lock is held 1.5 s
    assert await _gone_from_files(scratch_url, schema)  # the next pass found it free


@pytest.mark.postgres
async def test_postgres_close_rewrites_what_deletions_left(scratch_url: str) -> None:
    database, schema = await _open_scratch(scratch_url)
    try:
        await _fill_then_forget(database, PG_ROWS)
        database.reclaim_deleted_soon("notes")
    finally:
        await database.close()  # without waiting out the interval
    assert SECRET not in await _relation_bytes(scratch_url, schema)


@pytest.mark.postgres
async def test_postgres_close_waits_out_a_table_held_by_work_still_ending(scratch_url: str) -> None:
    # A pass that finds the table locked at shutdown is tried again: no later deletion would
    # come to ask for it before a restart.
    database, schema = await _open_scratch(scratch_url)
    try:
        await _fill_then_forget(database, PG_ROWS)
        database.reclaim_deleted_soon("notes")
        async with await psycopg.AsyncConnection.connect(scratch_url) as holder:
            await holder.execute(f'SELECT COUNT(*) FROM "{schema}".notes')
            closing = asyncio.ensure_future(database.close())
            await asyncio.sleep(1.5)  # longer than one pass's lock waits
            await holder.rollback()
            await closing
    finally:
        await database.close()
    assert SECRET not in await _relation_bytes(scratch_url, schema)
