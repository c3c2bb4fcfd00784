"""Current State projection in an SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memmesh.engines.current_state.state import UserState, decode_state, encode_state
from memmesh.storage.migrations import Migration
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE user_states (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                state TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
        ),
    ),
)


class SqliteStateStore:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> SqliteStateStore:
        return cls(open_sqlite(path, MIGRATIONS))

    async def get(self, tenant_id: str, user_id: str) -> UserState | None:
        row = self._db.execute(
            "SELECT state FROM user_states WHERE tenant_id = ? AND user_id = ?", (tenant_id, user_id)
        ).fetchone()
        return decode_state(row[0]) if row else None

    async def save(self, tenant_id: str, user_id: str, state: UserState, expected_version: int) -> bool:
        if expected_version == 0:
            cursor = self._db.execute(
                "INSERT INTO user_states (tenant_id, user_id, version, state) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant_id, user_id) DO NOTHING",
                (tenant_id, user_id, state.version, encode_state(state)),
            )
        else:
            cursor = self._db.execute(
                "UPDATE user_states SET version = ?, state = ? WHERE tenant_id = ? AND user_id = ? AND version = ?",
                (state.version, encode_state(state), tenant_id, user_id, expected_version),
            )
        return cursor.rowcount == 1

    async def replace(self, tenant_id: str, user_id: str, state: UserState) -> None:
        self._db.execute(
            "INSERT INTO user_states (tenant_id, user_id, version, state) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = excluded.version, state = excluded.state",
            (tenant_id, user_id, state.version, encode_state(state)),
        )

    async def close(self) -> None:
        self._db.close()
