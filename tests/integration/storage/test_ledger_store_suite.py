"""One contract suite for the ledger's storage port, run on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
import pytest_asyncio

from memmesh.engines.ledger.adapters.sql_store import SqlLedgerStore, migrations
from memmesh.engines.ledger.domain.chain import Attribute, NewEvent, verify
from memmesh.engines.ledger.ports import LedgerStore
from memmesh.runtime.errors import Conflict
from memmesh.storage.sql import Dialect, PostgresDatabase, SqliteDatabase


def event(key: str, value: str = "v") -> NewEvent:
    return NewEvent(
        key,
        "ATOM_CREATED",
        "USER_STATED",
        (Attribute("atom_id", "s", value),),
        1_700_000_000_000_000,
    )


def sqlite_store(path: Path) -> SqlLedgerStore:
    return SqlLedgerStore(SqliteDatabase.open(path, migrations(Dialect.SQLITE)))


async def postgres_store(url: str, schema: str = "ledger") -> SqlLedgerStore:
    return SqlLedgerStore(await PostgresDatabase.open(url, schema, migrations(Dialect.POSTGRES)))


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[LedgerStore]:
    if request.param == "sqlite":
        opened: LedgerStore = sqlite_store(tmp_path / "ledger.sqlite3")
    else:
        opened = await postgres_store(request.getfixturevalue("postgres_url"))
    yield opened
    await opened.close()


def stream() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


async def read_all(store: LedgerStore, tenant: str, user: str) -> list:  # type: ignore[type-arg]
    return [e async for e in store.read(tenant, user, 1, 0)]


async def test_append_then_read_returns_events_in_order_with_a_valid_chain(
    store: LedgerStore,
) -> None:
    tenant, user = stream()
    outcomes = await store.append(tenant, user, [event("a"), event("b"), event("c")])
    assert [o.sequence for o in outcomes] == [1, 2, 3]
    events = await read_all(store, tenant, user)
    assert [e.event.idempotency_key for e in events] == ["a", "b", "c"]
    assert verify(tenant, user, events).intact


async def test_same_key_same_content_returns_the_original_sequence_and_writes_nothing(
    store: LedgerStore,
) -> None:
    tenant, user = stream()
    first = await store.append(tenant, user, [event("a")])
    again = await store.append(tenant, user, [event("a")])
    assert again[0].sequence == first[0].sequence and again[0].duplicate
    assert len(await read_all(store, tenant, user)) == 1


async def test_same_key_other_content_is_refused_and_the_batch_is_not_written(
    store: LedgerStore,
) -> None:
    tenant, user = stream()
    await store.append(tenant, user, [event("a", "one")])
    with pytest.raises(Conflict):
        await store.append(tenant, user, [event("b"), event("a", "two")])
    events = await read_all(store, tenant, user)
    assert [e.event.idempotency_key for e in events] == ["a"]


async def test_streams_of_different_users_are_separate(store: LedgerStore) -> None:
    one, other = stream(), stream()
    await store.append(*one, [event("a")])
    await store.append(*other, [event("a"), event("b")])
    assert len(await read_all(store, *one)) == 1
    assert [o.sequence for o in await store.append(*one, [event("z")])] == [2]


async def test_read_from_a_sequence_with_a_limit(store: LedgerStore) -> None:
    tenant, user = stream()
    await store.append(tenant, user, [event(f"k{i}") for i in range(1200)])
    page = [e.sequence async for e in store.read(tenant, user, 600, 550)]
    assert page == list(range(600, 1150))
    assert len(await read_all(store, tenant, user)) == 1200


async def test_concurrent_appenders_get_gapless_sequences(store: LedgerStore) -> None:
    tenant, user = stream()

    async def writer(n: int) -> list[int]:
        return [
            (await store.append(tenant, user, [event(f"w{n}-{i}")]))[0].sequence for i in range(25)
        ]

    results = await asyncio.gather(*(writer(n) for n in range(8)))
    assert sorted(s for r in results for s in r) == list(range(1, 201))
    assert verify(tenant, user, await read_all(store, tenant, user)).intact


def test_sqlite_refuses_update_and_delete_of_ledger_rows(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    store = sqlite_store(path)
    asyncio.run(store.append("t", "u", [event("a")]))
    raw = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute("UPDATE ledger_events SET reason_code = 'X'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute("DELETE FROM ledger_events")


async def test_postgres_refuses_update_delete_and_truncate_of_ledger_rows(
    postgres_url: str,
) -> None:
    store = await postgres_store(postgres_url)
    tenant, user = stream()
    await store.append(tenant, user, [event("a")])
    await store.close()
    statements = [
        "UPDATE ledger.ledger_events SET reason_code = 'X' WHERE tenant_id = %s",
        "DELETE FROM ledger.ledger_events WHERE tenant_id = %s",
        "TRUNCATE ledger.ledger_events",
    ]
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as connection:
        for statement in statements:
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                await connection.execute(statement, (tenant,) if "%s" in statement else None)


async def test_sqlite_tampering_that_bypasses_the_guard_is_caught_at_its_sequence(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.sqlite3"
    store = sqlite_store(path)
    await store.append("t", "u", [event(f"k{i}") for i in range(6)])
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("DROP TRIGGER ledger_events_no_update")
    raw.execute(
        'UPDATE ledger_events SET attributes = \'[["atom_id","s","forged"]]\' WHERE sequence = 4'
    )
    raw.close()
    report = verify("t", "u", await read_all(store, "t", "u"))
    assert not report.intact and report.first_broken_sequence == 4


async def test_postgres_tampering_that_bypasses_the_guard_is_caught_at_its_sequence(
    postgres_url: str,
) -> None:
    schema = f"ledger_tamper_{uuid.uuid4().hex[:8]}"
    store = await postgres_store(postgres_url, schema)
    try:
        await store.append("t", "u", [event(f"k{i}") for i in range(6)])
        async with await psycopg.AsyncConnection.connect(
            postgres_url, autocommit=True
        ) as connection:
            await connection.execute(
                f"ALTER TABLE {schema}.ledger_events DISABLE TRIGGER ledger_events_no_update_delete"
            )
            await connection.execute(
                f"UPDATE {schema}.ledger_events SET reason_code = 'FORGED' WHERE sequence = 5"
            )
        report = verify("t", "u", await read_all(store, "t", "u"))
        assert not report.intact and report.first_broken_sequence == 5
    finally:
        await store.close()
        async with await psycopg.AsyncConnection.connect(
            postgres_url, autocommit=True
        ) as connection:
            await connection.execute(f"DROP SCHEMA {schema} CASCADE")
