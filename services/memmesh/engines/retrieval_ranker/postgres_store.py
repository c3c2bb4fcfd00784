"""Ranker documents in PostgreSQL (schema `retrieval_ranker`)."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from memmesh.engines.retrieval_ranker.store import Changes, Snapshot, StoredDoc
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool

SCHEMA = "retrieval_ranker"

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE ranker_users (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                generation BIGINT NOT NULL,
                rebuild_generation BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
            """CREATE TABLE ranker_documents (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                doc_id TEXT NOT NULL,
                kind INTEGER NOT NULL,
                payload BYTEA NOT NULL,
                change_generation BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, doc_id)
            )""",
            "CREATE INDEX ranker_documents_changes ON ranker_documents (tenant_id, user_id, change_generation)",
            # Ids only (never content), so that other processes learn what to drop.
            """CREATE TABLE ranker_removals (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                doc_id TEXT NOT NULL,
                change_generation BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, doc_id)
            )""",
        ),
    ),
)

# The row lock taken by this upsert serialises writers of one user across processes.
_BUMP = (
    "INSERT INTO ranker_users AS u (tenant_id, user_id, generation, rebuild_generation) "
    "VALUES (%(t)s, %(u)s, 1, CASE WHEN %(rebuild)s THEN 1 ELSE 0 END) "
    "ON CONFLICT (tenant_id, user_id) DO UPDATE SET generation = u.generation + 1, "
    "rebuild_generation = CASE WHEN %(rebuild)s THEN u.generation + 1 ELSE u.rebuild_generation END "
    "RETURNING generation"
)


async def _generations(connection: AsyncConnection, tenant_id: str, user_id: str) -> tuple[int, int]:
    cursor = await connection.execute(
        "SELECT generation, rebuild_generation FROM ranker_users WHERE tenant_id = %s AND user_id = %s",
        (tenant_id, user_id),
    )
    row = await cursor.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


async def _bump(connection: AsyncConnection, tenant_id: str, user_id: str, rebuild: bool) -> int:
    cursor = await connection.execute(_BUMP, {"t": tenant_id, "u": user_id, "rebuild": rebuild})
    row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def _write(
    connection: AsyncConnection, tenant_id: str, user_id: str, docs: Sequence[StoredDoc], generation: int
) -> None:
    async with connection.cursor() as cursor:
        await cursor.executemany(
            "INSERT INTO ranker_documents (tenant_id, user_id, doc_id, kind, payload, change_generation) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, user_id, doc_id) DO UPDATE SET "
            "kind = excluded.kind, payload = excluded.payload, change_generation = excluded.change_generation",
            [(tenant_id, user_id, d.doc_id, d.kind, d.payload, generation) for d in docs],
        )
    await connection.execute(
        "DELETE FROM ranker_removals WHERE tenant_id = %s AND user_id = %s AND doc_id = ANY(%s)",
        (tenant_id, user_id, [d.doc_id for d in docs]),
    )


class PostgresRankerStore:
    """Pooled connections; reads run in one REPEATABLE READ snapshot each."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema: str = SCHEMA) -> PostgresRankerStore:
        return cls(await open_pool(url, schema, MIGRATIONS))

    async def generation(self, tenant_id: str, user_id: str) -> int:
        async with self._pool.connection() as connection:
            return (await _generations(connection, tenant_id, user_id))[0]

    async def upsert(self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]) -> int:
        async with self._pool.connection() as connection, connection.transaction():
            generation = await _bump(connection, tenant_id, user_id, rebuild=False)
            await _write(connection, tenant_id, user_id, docs, generation)
            return generation

    async def remove(self, tenant_id: str, user_id: str, doc_ids: Sequence[str]) -> tuple[list[str], int]:
        async with self._pool.connection() as connection, connection.transaction():
            generation = await _bump(connection, tenant_id, user_id, rebuild=False)
            cursor = await connection.execute(
                "DELETE FROM ranker_documents WHERE tenant_id = %s AND user_id = %s AND doc_id = ANY(%s) "
                "RETURNING doc_id",
                (tenant_id, user_id, sorted(set(doc_ids))),
            )
            removed = sorted(str(row[0]) for row in await cursor.fetchall())
            # The generation is raised first even when nothing goes: writers of a user then
            # always lock the user's row before any document row, so they cannot deadlock.
            async with connection.cursor() as writer:
                await writer.executemany(
                    "INSERT INTO ranker_removals (tenant_id, user_id, doc_id, change_generation) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id, user_id, doc_id) "
                    "DO UPDATE SET change_generation = excluded.change_generation",
                    [(tenant_id, user_id, doc_id, generation) for doc_id in removed],
                )
            return removed, generation

    async def replace_all(self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]) -> int:
        async with self._pool.connection() as connection, connection.transaction():
            generation = await _bump(connection, tenant_id, user_id, rebuild=True)
            for table in ("ranker_documents", "ranker_removals"):
                await connection.execute(
                    f"DELETE FROM {table} WHERE tenant_id = %s AND user_id = %s",  # type: ignore[arg-type]
                    (tenant_id, user_id),
                )
            await _write(connection, tenant_id, user_id, docs, generation)
            return generation

    async def load(self, tenant_id: str, user_id: str) -> Snapshot:
        async with self._pool.connection() as connection, connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            generation = (await _generations(connection, tenant_id, user_id))[0]
            cursor = await connection.execute(
                "SELECT doc_id, kind, payload FROM ranker_documents WHERE tenant_id = %s AND user_id = %s "
                "ORDER BY doc_id",
                (tenant_id, user_id),
            )
            rows = await cursor.fetchall()
        return Snapshot(generation, [StoredDoc(str(d), int(k), bytes(p)) for d, k, p in rows])

    async def changes_since(self, tenant_id: str, user_id: str, generation: int) -> Changes | None:
        async with self._pool.connection() as connection, connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            current, rebuilt = await _generations(connection, tenant_id, user_id)
            if rebuilt > generation:
                return None
            scope = (tenant_id, user_id, generation)
            cursor = await connection.execute(
                "SELECT doc_id, kind, payload FROM ranker_documents WHERE tenant_id = %s AND user_id = %s "
                "AND change_generation > %s ORDER BY doc_id",
                scope,
            )
            upserted = [StoredDoc(str(d), int(k), bytes(p)) for d, k, p in await cursor.fetchall()]
            cursor = await connection.execute(
                "SELECT doc_id FROM ranker_removals WHERE tenant_id = %s AND user_id = %s "
                "AND change_generation > %s ORDER BY doc_id",
                scope,
            )
            removed = [str(row[0]) for row in await cursor.fetchall()]
        return Changes(current, upserted, removed)

    async def close(self) -> None:
        await self._pool.close()
