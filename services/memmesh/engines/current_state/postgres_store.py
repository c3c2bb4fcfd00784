"""Current State projection in PostgreSQL (schema `current_state`)."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from memmesh.engines.current_state.state import UserState, decode_state, encode_state
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool

SCHEMA = "current_state"

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE user_states (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                version BIGINT NOT NULL,
                state TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
        ),
    ),
)


class PostgresStateStore:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema: str = SCHEMA) -> PostgresStateStore:
        return cls(await open_pool(url, schema, MIGRATIONS))

    async def get(self, tenant_id: str, user_id: str) -> UserState | None:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                "SELECT state FROM user_states WHERE tenant_id = %s AND user_id = %s", (tenant_id, user_id)
            )
            row = await cursor.fetchone()
        return decode_state(row[0]) if row else None

    async def save(self, tenant_id: str, user_id: str, state: UserState, expected_version: int) -> bool:
        async with self._pool.connection() as connection:
            if expected_version == 0:
                cursor = await connection.execute(
                    "INSERT INTO user_states (tenant_id, user_id, version, state) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (tenant_id, user_id) DO NOTHING",
                    (tenant_id, user_id, state.version, encode_state(state)),
                )
            else:
                cursor = await connection.execute(
                    "UPDATE user_states SET version = %s, state = %s "
                    "WHERE tenant_id = %s AND user_id = %s AND version = %s",
                    (state.version, encode_state(state), tenant_id, user_id, expected_version),
                )
            return cursor.rowcount == 1

    async def replace(self, tenant_id: str, user_id: str, state: UserState) -> None:
        async with self._pool.connection() as connection:
            await connection.execute(
                "INSERT INTO user_states (tenant_id, user_id, version, state) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = excluded.version, state = excluded.state",
                (tenant_id, user_id, state.version, encode_state(state)),
            )

    async def close(self) -> None:
        await self._pool.close()
