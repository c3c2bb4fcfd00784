"""The one SQL store of the engine kit: the same SQL on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, PostgresDatabase, SqliteDatabase, marks


def migrations(dialect: Dialect) -> list[Migration]:
    return [
        Migration(
            1,
            (
                f"CREATE TABLE kit_rows (owner TEXT NOT NULL, n {dialect.big_int} NOT NULL, "
                f"data {dialect.blob} NOT NULL, PRIMARY KEY (owner, n))",
            ),
        )
    ]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    opened: Database
    if request.param == "sqlite":
        opened = SqliteDatabase.open(tmp_path / "kit.sqlite3", migrations(Dialect.SQLITE))
    else:
        url = request.getfixturevalue("postgres_url")
        opened = await PostgresDatabase.open(url, "kit_test", migrations(Dialect.POSTGRES))
    yield opened
    await opened.close()


async def test_one_sql_text_writes_and_reads_on_both_dialects(database: Database) -> None:
    owner = uuid.uuid4().hex
    async with database.write(owner) as tx:
        await tx.executemany(
            "INSERT INTO kit_rows (owner, n, data) VALUES (?, ?, ?)",
            [(owner, n, bytes([n])) for n in range(5)],
        )
        assert (
            await tx.execute(
                "UPDATE kit_rows SET data = ? WHERE owner = ? AND n = ?", (b"x", owner, 4)
            )
            == 1
        )
    async with database.read() as tx:
        rows = await tx.fetchall(
            f"SELECT n, data FROM kit_rows WHERE owner = ? AND n IN ({marks(3)}) ORDER BY n",
            (owner, 0, 2, 4),
        )
        missing = await tx.fetchone("SELECT n FROM kit_rows WHERE owner = ? AND n = ?", (owner, 99))
    assert [(int(n), bytes(data)) for n, data in rows] == [(0, b"\x00"), (2, b"\x02"), (4, b"x")]
    assert missing is None


async def test_a_failed_transaction_leaves_nothing_behind(database: Database) -> None:
    owner = uuid.uuid4().hex
    with pytest.raises(RuntimeError):
        async with database.write(owner) as tx:
            await tx.execute(
                "INSERT INTO kit_rows (owner, n, data) VALUES (?, ?, ?)", (owner, 1, b"")
            )
            raise RuntimeError("abort")
    async with database.read() as tx:
        assert await tx.fetchall("SELECT n FROM kit_rows WHERE owner = ?", (owner,)) == []


async def test_writers_of_one_key_serialise(database: Database) -> None:
    owner = uuid.uuid4().hex

    async def bump() -> None:
        async with database.write(owner) as tx:
            row = await tx.fetchone("SELECT COUNT(*) FROM kit_rows WHERE owner = ?", (owner,))
            assert row is not None
            await asyncio.sleep(0)
            await tx.execute(
                "INSERT INTO kit_rows (owner, n, data) VALUES (?, ?, ?)", (owner, int(row[0]), b"")
            )

    await asyncio.gather(*(bump() for _ in range(8)))
    async with database.read() as tx:
        rows = await tx.fetchall("SELECT n FROM kit_rows WHERE owner = ? ORDER BY n", (owner,))
    assert [int(r[0]) for r in rows] == list(range(8))


async def test_a_sqlite_writer_waits_for_another_process_lock_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.sqlite3"
    first = SqliteDatabase.open(path, migrations(Dialect.SQLITE))
    second = SqliteDatabase.open(path, migrations(Dialect.SQLITE))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.001)

    ticking = asyncio.create_task(ticker())
    try:
        async with first.write("a") as tx:
            await tx.execute("INSERT INTO kit_rows (owner, n, data) VALUES ('a', 1, x'')")
            waiting = asyncio.create_task(_insert(second, 2))
            await asyncio.sleep(0.1)
            assert not waiting.done()  # the other connection is held off by the file lock
            ticks_while_held = ticks
        await asyncio.wait_for(waiting, timeout=5)
    finally:
        ticking.cancel()
        await first.close()
        await second.close()
    assert ticks_while_held >= 5  # the loop kept running while the second writer waited


async def _insert(database: SqliteDatabase, n: int) -> None:
    async with database.write("a") as tx:
        await tx.execute("INSERT INTO kit_rows (owner, n, data) VALUES ('a', ?, x'')", (n,))


async def test_sqlite_commits_reach_the_file_by_a_background_checkpoint(tmp_path: Path) -> None:
    """The serving connection never checkpoints (a checkpoint's fsync would stall the event
    loop every statement runs on); a worker thread does, soon after the writes."""
    path = tmp_path / "kit.sqlite3"
    database = SqliteDatabase.open(path, migrations(Dialect.SQLITE), checkpoint_interval_s=0.2)
    marker = b"checkpointed-marker-" + uuid.uuid4().hex.encode()
    try:
        async with database.read() as tx:
            assert await tx.fetchone("PRAGMA wal_autocheckpoint") == (0,)
        async with database.write("k") as tx:
            await tx.execute(
                "INSERT INTO kit_rows (owner, n, data) VALUES (?, ?, ?)", ("k", 1, marker)
            )
        # Committed into the WAL only: the file itself does not hold the row yet.
        assert marker not in path.read_bytes()
        assert marker in Path(f"{path}-wal").read_bytes()
        deadline = asyncio.get_running_loop().time() + 10
        while marker not in path.read_bytes():
            assert asyncio.get_running_loop().time() < deadline, "no checkpoint came"
            await asyncio.sleep(0.05)
        async with database.read() as tx:
            assert await tx.fetchone("SELECT data FROM kit_rows WHERE owner = ?", ("k",)) == (
                marker,
            )
    finally:
        await database.close()
