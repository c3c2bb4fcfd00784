"""The extraction retry queue in an SQLite file under data_dir."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memmesh.engines.gateway.store import PendingExtraction
from memmesh.storage.migrations import Migration
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE pending_extractions (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                turn_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                text TEXT NOT NULL,
                time_us INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_us INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant_id, user_id, turn_id)
            )""",
            "CREATE INDEX pending_extractions_due ON pending_extractions (next_attempt_us)",
        ),
    ),
)

_COLUMNS = "tenant_id, user_id, turn_id, session_id, text, time_us, attempts, next_attempt_us"


class SqlitePendingStore:
    """One connection; each call is one short local statement run on the event loop."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> SqlitePendingStore:
        return cls(open_sqlite(path, MIGRATIONS))

    async def add(self, item: PendingExtraction) -> None:
        self._db.execute(
            f"INSERT OR IGNORE INTO pending_extractions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (item.tenant_id, item.user_id, item.turn_id, item.session_id, item.text, item.time_us, item.attempts, item.next_attempt_us),
        )

    async def remove(self, tenant_id: str, user_id: str, turn_id: str) -> None:
        self._db.execute(
            "DELETE FROM pending_extractions WHERE tenant_id = ? AND user_id = ? AND turn_id = ?", (tenant_id, user_id, turn_id)
        )

    async def is_pending(self, tenant_id: str, user_id: str, turn_id: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM pending_extractions WHERE tenant_id = ? AND user_id = ? AND turn_id = ?", (tenant_id, user_id, turn_id)
        ).fetchone()
        return row is not None

    async def due(self, now_us: int, limit: int) -> list[PendingExtraction]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM pending_extractions WHERE next_attempt_us <= ? "
            "ORDER BY next_attempt_us, time_us, turn_id LIMIT ?",
            (now_us, limit),
        ).fetchall()
        return [PendingExtraction(*row) for row in rows]

    async def reschedule(self, tenant_id: str, user_id: str, turn_id: str, attempts: int, next_attempt_us: int) -> None:
        self._db.execute(
            "UPDATE pending_extractions SET attempts = ?, next_attempt_us = ? WHERE tenant_id = ? AND user_id = ? AND turn_id = ?",
            (attempts, next_attempt_us, tenant_id, user_id, turn_id),
        )

    async def count(self, tenant_id: str, user_id: str) -> int:
        row = self._db.execute(
            "SELECT COUNT(*) FROM pending_extractions WHERE tenant_id = ? AND user_id = ?", (tenant_id, user_id)
        ).fetchone()
        return int(row[0])

    async def close(self) -> None:
        self._db.close()
