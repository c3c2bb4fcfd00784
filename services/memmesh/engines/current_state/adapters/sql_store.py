"""The projection in SQL: one text for SQLite (a file under data_dir) and PostgreSQL
(schema `current_state`); one row per user, saved by compare-and-set on its version."""

from __future__ import annotations

from pathlib import Path

from memmesh.engines.current_state.domain.state import UserState, decode_state, encode_state
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, open_database

ENGINE = "current_state"

_UPSERT = (
    "INSERT INTO user_states (tenant_id, user_id, version, state) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (tenant_id, user_id) "
)


def migrations_for(dialect: Dialect) -> tuple[Migration, ...]:
    """The projection's schema in the dialect's type names."""
    return (
        Migration(
            1,
            (
                f"""CREATE TABLE user_states (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                version {dialect.big_int} NOT NULL,
                state TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
            ),
        ),
    )


class SqlStateStore:
    """The projection store over one engine database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @classmethod
    async def open(cls, storage_url: str, data_dir: Path) -> SqlStateStore:
        return cls(await open_database(storage_url, ENGINE, migrations_for, data_dir))

    async def get(self, tenant_id: str, user_id: str) -> UserState | None:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                "SELECT state FROM user_states WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
        return decode_state(str(row[0])) if row else None

    async def save(
        self, tenant_id: str, user_id: str, state: UserState, expected_version: int
    ) -> bool:
        async with self._db.write(tenant_id, user_id) as tx:
            if expected_version == 0:
                changed = await tx.execute(
                    _UPSERT + "DO NOTHING", (tenant_id, user_id, state.version, encode_state(state))
                )
            else:
                changed = await tx.execute(
                    "UPDATE user_states SET version = ?, state = ? "
                    "WHERE tenant_id = ? AND user_id = ? AND version = ?",
                    (state.version, encode_state(state), tenant_id, user_id, expected_version),
                )
        return changed == 1

    async def replace(self, tenant_id: str, user_id: str, state: UserState) -> None:
        async with self._db.write(tenant_id, user_id) as tx:
            await tx.execute(
                _UPSERT + "DO UPDATE SET version = excluded.version, state = excluded.state",
                (tenant_id, user_id, state.version, encode_state(state)),
            )

    async def close(self) -> None:
        await self._db.close()
