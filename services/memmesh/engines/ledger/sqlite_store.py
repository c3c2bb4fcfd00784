"""Ledger streams in an SQLite file. Triggers make the table append-only."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

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
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE ledger_events (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                idempotency_key TEXT NOT NULL,
                content_hash BLOB NOT NULL,
                event_type TEXT NOT NULL,
                reason_code TEXT NOT NULL,
                attributes TEXT NOT NULL,
                occur_time_us INTEGER NOT NULL,
                previous_hash BLOB NOT NULL,
                hash BLOB NOT NULL,
                PRIMARY KEY (tenant_id, user_id, sequence),
                UNIQUE (tenant_id, user_id, idempotency_key)
            )""",
            """CREATE TRIGGER ledger_events_no_update BEFORE UPDATE ON ledger_events
               BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END""",
            """CREATE TRIGGER ledger_events_no_delete BEFORE DELETE ON ledger_events
               BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END""",
        ),
    ),
)

_COLUMNS = "sequence, idempotency_key, event_type, reason_code, attributes, occur_time_us, previous_hash, hash"


class SqliteLedgerStore:
    """One connection; calls run on the event loop because each is a short local
    transaction (well under a millisecond), and BEGIN IMMEDIATE serialises writers
    across processes sharing the file."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> SqliteLedgerStore:
        return cls(open_sqlite(path, MIGRATIONS))

    async def append(self, tenant_id: str, user_id: str, events: Sequence[NewEvent]) -> list[AppendOutcome]:
        db = self._db
        keys = [event.idempotency_key for event in events]
        db.execute("BEGIN IMMEDIATE")
        try:
            head = db.execute(
                "SELECT sequence, hash FROM ledger_events WHERE tenant_id = ? AND user_id = ? "
                "ORDER BY sequence DESC LIMIT 1",
                (tenant_id, user_id),
            ).fetchone()
            rows = db.execute(
                "SELECT idempotency_key, sequence, hash, content_hash FROM ledger_events "
                f"WHERE tenant_id = ? AND user_id = ? AND idempotency_key IN ({','.join('?' * len(keys))})",
                (tenant_id, user_id, *keys),
            ).fetchall()
            plan = plan_append(
                tenant_id,
                user_id,
                head[0] if head else 0,
                bytes(head[1]) if head else GENESIS_HASH,
                events,
                {key: Existing(seq, bytes(digest), bytes(content)) for key, seq, digest, content in rows},
            )
            db.executemany(
                f"INSERT INTO ledger_events (tenant_id, user_id, content_hash, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(tenant_id, user_id, *row_of(stored)) for stored in plan.inserts],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return [AppendOutcome(*outcome) for outcome in plan.outcomes]

    def read(self, tenant_id: str, user_id: str, from_sequence: int, limit: int) -> AsyncIterator[StoredEvent]:
        async def fetch_page(next_sequence: int, page: int) -> list[tuple]:  # type: ignore[type-arg]
            return self._db.execute(
                f"SELECT {_COLUMNS} FROM ledger_events WHERE tenant_id = ? AND user_id = ? "
                "AND sequence >= ? ORDER BY sequence LIMIT ?",
                (tenant_id, user_id, next_sequence, page),
            ).fetchall()

        return read_in_pages(fetch_page, from_sequence, limit)

    async def close(self) -> None:
        self._db.close()
