"""Opening a pooled PostgreSQL connection for one engine's schema, migrations applied."""

from __future__ import annotations

import re
from collections.abc import Sequence

from psycopg import AsyncConnection, sql
from psycopg_pool import AsyncConnectionPool

from memmesh.storage.migrations import Migration

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]*")


async def open_pool(
    url: str, schema: str, migrations: Sequence[Migration], max_size: int = 10
) -> AsyncConnectionPool:
    """A pool whose connections use the engine's schema; migrations applied before it opens."""
    if not _SCHEMA_NAME.fullmatch(schema):
        raise ValueError(f"bad schema name {schema!r}")
    async with await AsyncConnection.connect(url, autocommit=True) as connection:
        await apply_postgres_migrations(connection, schema, migrations)
    pool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        # search_path in the startup packet: no extra round trip per connection.
        kwargs={"options": f"-c search_path={schema}", "autocommit": True},
        open=False,
    )
    await pool.open(wait=True, timeout=10)
    return pool


async def apply_postgres_migrations(
    connection: AsyncConnection, schema: str, migrations: Sequence[Migration]
) -> None:
    """Apply pending migrations under an advisory lock, so engines starting together agree."""
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"memmesh:{schema}",)
        )
        await connection.execute(
            sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
        )
        await connection.execute(
            sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema))
        )
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)"
        )
        for migration in sorted(migrations, key=lambda m: m.version):
            cursor = await connection.execute(
                "SELECT 1 FROM schema_migrations WHERE version = %s", (migration.version,)
            )
            if await cursor.fetchone() is not None:
                continue
            for statement in migration.statements:
                await connection.execute(statement)
            await connection.execute(
                "INSERT INTO schema_migrations (version) VALUES (%s)", (migration.version,)
            )
