"""NUL in text is refused alike by both backends of the SQL store, as bad input (PostgreSQL
text cannot hold it; SQLite would have kept it), and the refused write leaves the rows that
were there before untouched. Bytes columns keep NUL as data."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memmesh.errors import InvalidInput
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, PostgresDatabase, SqliteDatabase


def migrations(dialect: Dialect) -> list[Migration]:
    return [
        Migration(
            1,
            (
                f"CREATE TABLE nul_rows (owner TEXT NOT NULL, n {dialect.big_int} NOT NULL, "
                f"note TEXT NOT NULL, data {dialect.blob} NOT NULL, PRIMARY KEY (owner, n))",
            ),
        )
    ]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    opened: Database
    if request.param == "sqlite":
        opened = SqliteDatabase.open(tmp_path / "nul.sqlite3", migrations(Dialect.SQLITE))
    else:
        url = request.getfixturevalue("postgres_url")
        opened = await PostgresDatabase.open(url, "nul_text_test", migrations(Dialect.POSTGRES))
    yield opened
    await opened.close()


INSERT = "INSERT INTO nul_rows (owner, n, note, data) VALUES (?, ?, ?, ?)"


async def test_nul_in_text_is_invalid_input_on_every_statement_kind(database: Database) -> None:
    owner = uuid.uuid4().hex
    async with database.write(owner) as tx:
        await tx.execute(INSERT, (owner, 1, "kept", b"\x00\x01"))
    for attempt in ("execute", "executemany", "fetchone", "fetchall"):
        with pytest.raises(InvalidInput) as refused:
            async with database.write(owner) as tx:
                await tx.execute("UPDATE nul_rows SET note = ? WHERE owner = ?", ("changed", owner))
                if attempt == "execute":
                    await tx.execute(INSERT, (owner, 2, "a\x00b", b""))
                elif attempt == "executemany":
                    await tx.executemany(INSERT, [(owner, 3, "ok", b""), (owner, 4, "\x00", b"")])
                elif attempt == "fetchone":
                    await tx.fetchone("SELECT n FROM nul_rows WHERE owner = ?", (f"{owner}\x00",))
                else:
                    await tx.fetchall("SELECT n FROM nul_rows WHERE note = ?", ("\x00",))
        assert refused.value.status_name == "INVALID_ARGUMENT", attempt
    async with database.read() as tx:
        rows = await tx.fetchall("SELECT n, note, data FROM nul_rows WHERE owner = ?", (owner,))
    # The refused transactions rolled back whole: the earlier row is as it was.
    assert [(int(n), note, bytes(data)) for n, note, data in rows] == [(1, "kept", b"\x00\x01")]
