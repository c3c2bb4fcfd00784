"""The capsule in PostgreSQL (schema `atom_extractor`), pooled connections."""

from __future__ import annotations

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from memmesh.engines.atom_extractor import store_codec as codec
from memmesh.engines.atom_extractor.capsule import (
    AtomRecord,
    CapsuleCommit,
    CorrectionPair,
    Effect,
    ProvenanceEntry,
    RejectionEntry,
)
from memmesh.runtime.errors import VersionMismatch
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool

SCHEMA = "atom_extractor"

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE capsule_atoms (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, atom_id TEXT NOT NULL,
                atom_key TEXT NOT NULL, version BIGINT NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, atom_id))""",
            "CREATE INDEX capsule_atoms_by_key ON capsule_atoms (tenant_id, user_id, atom_key, atom_id)",
            """CREATE TABLE capsule_markers (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, marker TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, marker))""",
            """CREATE TABLE capsule_corrections (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
                heard TEXT NOT NULL, meant TEXT NOT NULL, record_time_us BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, turn_id))""",
            """CREATE TABLE capsule_rejections (
                seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                reject_time_us BIGINT NOT NULL, body TEXT NOT NULL)""",
            "CREATE INDEX capsule_rejections_by_user ON capsule_rejections (tenant_id, user_id, reject_time_us)",
            """CREATE TABLE capsule_provenance (
                seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                record_time_us BIGINT NOT NULL, body TEXT NOT NULL)""",
            "CREATE INDEX capsule_provenance_by_user ON capsule_provenance (tenant_id, user_id, record_time_us)",
            """CREATE TABLE capsule_session_refs (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, atom_ids TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, session_id))""",
            """CREATE TABLE capsule_effects (
                seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                kind TEXT NOT NULL, payload TEXT NOT NULL)""",
            "CREATE INDEX capsule_effects_by_user ON capsule_effects (tenant_id, user_id, seq)",
        ),
    ),
)


class PostgresCapsuleStore:
    """Writers of one user serialise on a transaction-scoped advisory lock; atom versions
    catch any writer that planned on a state that has since moved on."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema: str = SCHEMA) -> PostgresCapsuleStore:
        return cls(await open_pool(url, schema, MIGRATIONS))

    async def _rows(self, query: str, params: tuple[object, ...]) -> list[tuple[object, ...]]:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(query, params)  # type: ignore[arg-type]
            return await cursor.fetchall()

    async def load_atoms(self, tenant_id: str, user_id: str) -> list[AtomRecord]:
        rows = await self._rows(
            "SELECT body FROM capsule_atoms WHERE tenant_id = %s AND user_id = %s "
            'ORDER BY atom_key COLLATE "C", atom_id COLLATE "C"',
            (tenant_id, user_id),
        )
        return [codec.atom_of(str(row[0])) for row in rows]

    async def list_atoms(
        self, tenant_id: str, user_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[AtomRecord]:
        key, atom_id = after or ("", "")
        rows = await self._rows(
            "SELECT body FROM capsule_atoms WHERE tenant_id = %s AND user_id = %s "
            'AND (atom_key COLLATE "C", atom_id COLLATE "C") > (%s, %s) '
            'ORDER BY atom_key COLLATE "C", atom_id COLLATE "C" LIMIT %s',
            (tenant_id, user_id, key, atom_id, limit),
        )
        return [codec.atom_of(str(row[0])) for row in rows]

    async def session_refs(self, tenant_id: str, user_id: str, session_id: str) -> tuple[str, ...]:
        rows = await self._rows(
            "SELECT atom_ids FROM capsule_session_refs WHERE tenant_id = %s AND user_id = %s AND session_id = %s",
            (tenant_id, user_id, session_id),
        )
        return codec.refs_of(str(rows[0][0])) if rows else ()

    async def is_processed(self, tenant_id: str, user_id: str, marker: str) -> bool:
        rows = await self._rows(
            "SELECT 1 FROM capsule_markers WHERE tenant_id = %s AND user_id = %s AND marker = %s",
            (tenant_id, user_id, marker),
        )
        return bool(rows)

    async def commit(self, tenant_id: str, user_id: str, commit: CapsuleCommit) -> bool:
        scope = (tenant_id, user_id)
        async with self._pool.connection() as connection:
            try:
                async with connection.transaction():
                    await connection.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                        (f"capsule\x1f{tenant_id}\x1f{user_id}",),
                    )
                    marked = await connection.execute(
                        "INSERT INTO capsule_markers VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                        (*scope, commit.marker),
                    )
                    if marked.rowcount == 0:
                        raise _AlreadyProcessed
                    await self._write(connection, scope, commit)
            except _AlreadyProcessed:
                return False
        return True

    async def _write(
        self, connection: AsyncConnection, scope: tuple[str, str], commit: CapsuleCommit
    ) -> None:
        for atom, expected in commit.upserts:
            body = codec.atom_body(atom)
            if expected == 0:
                written = await connection.execute(
                    "INSERT INTO capsule_atoms VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (*scope, atom.atom_id, atom.key, atom.version, body),
                )
            else:
                written = await connection.execute(
                    "UPDATE capsule_atoms SET atom_key = %s, version = %s, body = %s "
                    "WHERE tenant_id = %s AND user_id = %s AND atom_id = %s AND version = %s",
                    (atom.key, atom.version, body, *scope, atom.atom_id, expected),
                )
            if written.rowcount != 1:
                raise VersionMismatch(f"atom {atom.atom_id} changed concurrently")
        async with connection.cursor() as cursor:
            await cursor.executemany(
                "DELETE FROM capsule_atoms WHERE tenant_id = %s AND user_id = %s AND atom_id = %s",
                [(*scope, atom_id) for atom_id in commit.deletes],
            )
            await cursor.executemany(
                "INSERT INTO capsule_corrections VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [
                    (*scope, p.turn_id, p.heard, p.meant, p.record_time_us)
                    for p in commit.corrections
                ],
            )
            await cursor.executemany(
                "INSERT INTO capsule_rejections (tenant_id, user_id, reject_time_us, body) VALUES (%s, %s, %s, %s)",
                [(*scope, r.reject_time_us, codec.rejection_body(r)) for r in commit.rejections],
            )
            await cursor.executemany(
                "INSERT INTO capsule_provenance (tenant_id, user_id, record_time_us, body) VALUES (%s, %s, %s, %s)",
                [(*scope, p.record_time_us, codec.provenance_body(p)) for p in commit.provenance],
            )
            if commit.session_refs is not None:
                session_id, atom_ids = commit.session_refs
                await cursor.execute(
                    "INSERT INTO capsule_session_refs VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (tenant_id, user_id, session_id) DO UPDATE SET atom_ids = excluded.atom_ids",
                    (*scope, session_id, codec.refs_body(atom_ids)),
                )
            await cursor.executemany(
                "INSERT INTO capsule_effects (tenant_id, user_id, kind, payload) VALUES (%s, %s, %s, %s)",
                [(*scope, e.kind.value, codec.effect_payload(e)) for e in commit.effects],
            )

    async def list_corrections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[CorrectionPair]:
        rows = await self._rows(
            "SELECT heard, meant, turn_id, record_time_us FROM capsule_corrections WHERE tenant_id = %s AND user_id = %s "
            'ORDER BY record_time_us DESC, turn_id COLLATE "C" DESC LIMIT %s',
            (tenant_id, user_id, limit),
        )
        return [CorrectionPair(str(h), str(m), str(t), int(r)) for h, m, t, r in rows]  # type: ignore[call-overload]

    async def list_rejections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[RejectionEntry]:
        rows = await self._rows(
            "SELECT body FROM capsule_rejections WHERE tenant_id = %s AND user_id = %s "
            "ORDER BY reject_time_us DESC, seq DESC LIMIT %s",
            (tenant_id, user_id, limit),
        )
        return [codec.rejection_of(str(row[0])) for row in rows]

    async def list_provenance(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[ProvenanceEntry]:
        rows = await self._rows(
            "SELECT body FROM capsule_provenance WHERE tenant_id = %s AND user_id = %s "
            "ORDER BY record_time_us DESC, seq DESC LIMIT %s",
            (tenant_id, user_id, limit),
        )
        return [codec.provenance_of(str(row[0])) for row in rows]

    async def pending_effects(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[tuple[int, Effect]]:
        rows = await self._rows(
            "SELECT seq, kind, payload FROM capsule_effects WHERE tenant_id = %s AND user_id = %s ORDER BY seq LIMIT %s",
            (tenant_id, user_id, limit),
        )
        return [(int(row[0]), codec.effect_of(str(row[1]), str(row[2]))) for row in rows]  # type: ignore[call-overload]

    async def complete_effects(self, tenant_id: str, user_id: str, sequences: list[int]) -> None:
        if sequences:
            await self._rows(
                "DELETE FROM capsule_effects WHERE tenant_id = %s AND user_id = %s AND seq = ANY(%s) RETURNING seq",
                (tenant_id, user_id, sequences),
            )

    async def count_pending(self, tenant_id: str, user_id: str) -> int:
        rows = await self._rows(
            "SELECT COUNT(*) FROM capsule_effects WHERE tenant_id = %s AND user_id = %s",
            (tenant_id, user_id),
        )
        return int(rows[0][0])  # type: ignore[call-overload]

    async def close(self) -> None:
        await self._pool.close()


class _AlreadyProcessed(Exception):
    """Raised inside the transaction to roll it back when the marker is stored already."""
