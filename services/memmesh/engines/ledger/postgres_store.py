"""Ledger streams in PostgreSQL (schema `ledger`). Triggers make the table append-only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from psycopg_pool import AsyncConnectionPool

from memmesh.engines.ledger.chain import (
    GENESIS_HASH,
    Existing,
    NewEvent,
    StoredEvent,
    plan_append,
    read_in_pages,
    row_of,
)
from memmesh.engines.ledger.store import AppendOutcome
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool

SCHEMA = "ledger"

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE ledger_events (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                sequence BIGINT NOT NULL,
                idempotency_key TEXT NOT NULL,
                content_hash BYTEA NOT NULL,
                event_type TEXT NOT NULL,
                reason_code TEXT NOT NULL,
                attributes TEXT NOT NULL,
                occur_time_us BIGINT NOT NULL,
                previous_hash BYTEA NOT NULL,
                hash BYTEA NOT NULL,
                PRIMARY KEY (tenant_id, user_id, sequence),
                UNIQUE (tenant_id, user_id, idempotency_key)
            )""",
            """CREATE FUNCTION ledger_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'ledger is append-only'; END $$""",
            """CREATE TRIGGER ledger_events_no_update_delete BEFORE UPDATE OR DELETE ON ledger_events
               FOR EACH ROW EXECUTE FUNCTION ledger_forbid_change()""",
            """CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events
               FOR EACH STATEMENT EXECUTE FUNCTION ledger_forbid_change()""",
        ),
    ),
)

_COLUMNS = "sequence, idempotency_key, event_type, reason_code, attributes, occur_time_us, previous_hash, hash"


class PostgresLedgerStore:
    """Writers of one stream serialise on a transaction-scoped advisory lock on the
    stream, so sequences stay gapless across any number of engine processes."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema: str = SCHEMA) -> PostgresLedgerStore:
        return cls(await open_pool(url, schema, MIGRATIONS))

    async def append(self, tenant_id: str, user_id: str, events: Sequence[NewEvent]) -> list[AppendOutcome]:
        keys = [event.idempotency_key for event in events]
        async with self._pool.connection() as connection, connection.transaction():
            await connection.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{tenant_id}\x1f{user_id}",)
            )
            cursor = await connection.execute(
                "SELECT sequence, hash FROM ledger_events WHERE tenant_id = %s AND user_id = %s "
                "ORDER BY sequence DESC LIMIT 1",
                (tenant_id, user_id),
            )
            head = await cursor.fetchone()
            cursor = await connection.execute(
                "SELECT idempotency_key, sequence, hash, content_hash FROM ledger_events "
                "WHERE tenant_id = %s AND user_id = %s AND idempotency_key = ANY(%s)",
                (tenant_id, user_id, keys),
            )
            rows = await cursor.fetchall()
            plan = plan_append(
                tenant_id,
                user_id,
                head[0] if head else 0,
                bytes(head[1]) if head else GENESIS_HASH,
                events,
                {key: Existing(seq, bytes(digest), bytes(content)) for key, seq, digest, content in rows},
            )
            async with connection.cursor() as writer:
                await writer.executemany(
                    f"INSERT INTO ledger_events (tenant_id, user_id, content_hash, {_COLUMNS}) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(tenant_id, user_id, *row_of(stored)) for stored in plan.inserts],
                )
        return [AppendOutcome(*outcome) for outcome in plan.outcomes]

    def read(self, tenant_id: str, user_id: str, from_sequence: int, limit: int) -> AsyncIterator[StoredEvent]:
        async def fetch_page(next_sequence: int, page: int) -> list[tuple]:  # type: ignore[type-arg]
            async with self._pool.connection() as connection:
                cursor = await connection.execute(
                    f"SELECT {_COLUMNS} FROM ledger_events WHERE tenant_id = %s AND user_id = %s "
                    "AND sequence >= %s ORDER BY sequence LIMIT %s",
                    (tenant_id, user_id, next_sequence, page),
                )
                return await cursor.fetchall()

        return read_in_pages(fetch_page, from_sequence, limit)

    async def close(self) -> None:
        await self._pool.close()
