"""Ranker documents in SQL: one text for SQLite (a file under data_dir) and PostgreSQL
(schema `retrieval_ranker`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from memmesh.engines.retrieval_ranker.ports import Changes, Snapshot, StoredDoc
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, Row, SqlTx, marks, open_database

ENGINE = "retrieval_ranker"
# The tables whose deleted rows held content (document payloads).
ERASED_TABLES = ("ranker_documents",)

T = TypeVar("T")


def migrations_for(dialect: Dialect) -> tuple[Migration, ...]:
    """The documents' schema in the dialect's type names."""
    return (
        Migration(
            1,
            (
                f"""CREATE TABLE ranker_users (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                generation {dialect.big_int} NOT NULL,
                rebuild_generation {dialect.big_int} NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
                f"""CREATE TABLE ranker_documents (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                doc_id TEXT NOT NULL,
                kind INTEGER NOT NULL,
                payload {dialect.blob} NOT NULL,
                change_generation {dialect.big_int} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, doc_id)
            )""",
                "CREATE INDEX ranker_documents_changes ON ranker_documents (tenant_id, user_id, change_generation)",
                # Ids only (never content), so that other processes learn what to drop.
                f"""CREATE TABLE ranker_removals (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                doc_id TEXT NOT NULL,
                change_generation {dialect.big_int} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, doc_id)
            )""",
            ),
        ),
        # The source's version of each document and removal, and the version of the user's
        # last forgetting (numbers only): a late, older upsert never undoes a newer change.
        Migration(
            2,
            (
                f"ALTER TABLE ranker_documents ADD COLUMN version {dialect.big_int} NOT NULL DEFAULT 0",
                f"ALTER TABLE ranker_removals ADD COLUMN version {dialect.big_int} NOT NULL DEFAULT 0",
                f"ALTER TABLE ranker_users ADD COLUMN forgotten_version {dialect.big_int} NOT NULL DEFAULT 0",
            ),
        ),
        # Each document's dense vector, derived at write time so a load does not derive it
        # again (NULL for rows written before: derived on load, stored by the next Reindex).
        Migration(
            3,
            (f"ALTER TABLE ranker_documents ADD COLUMN vector {dialect.blob}",),
        ),
        # Each document's analysed index terms, for the same reason: a user's index is read
        # whole whenever it is not cached, and analysing every text again was most of that
        # read (NULL for rows written before: analysed on load, stored by the next Reindex).
        Migration(4, ("ALTER TABLE ranker_documents ADD COLUMN terms TEXT",)),
    )


async def _versions(
    tx: SqlTx, tenant_id: str, user_id: str, table: str, doc_ids: Sequence[str]
) -> dict[str, int]:
    """The stored version of each of these ids in the table (documents or removals)."""
    found: dict[str, int] = {}
    wanted = sorted(set(doc_ids))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = await tx.fetchall(
            f"SELECT doc_id, version FROM {table} WHERE tenant_id = ? AND user_id = ? "
            f"AND doc_id IN ({marks(len(chunk))})",
            (tenant_id, user_id, *chunk),
        )
        found.update((str(doc_id), int(version)) for doc_id, version in rows)
    return found


async def _forgotten_version(tx: SqlTx, tenant_id: str, user_id: str) -> int:
    row = await tx.fetchone(
        "SELECT forgotten_version FROM ranker_users WHERE tenant_id = ? AND user_id = ?",
        (tenant_id, user_id),
    )
    return int(row[0]) if row else 0


async def _admitted(
    tx: SqlTx, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]
) -> list[StoredDoc]:
    """The documents no newer change has overtaken: an unversioned document always, a
    versioned one when no stored document or removal of its id has a higher version and
    the user was not forgotten at its version or later."""
    versioned = [d.doc_id for d in docs if d.version > 0]
    if not versioned:
        return list(docs)
    forgotten = await _forgotten_version(tx, tenant_id, user_id)
    stored = await _versions(tx, tenant_id, user_id, "ranker_documents", versioned)
    removed = await _versions(tx, tenant_id, user_id, "ranker_removals", versioned)
    return [
        d
        for d in docs
        if d.version == 0
        or (
            d.version > forgotten
            and d.version >= stored.get(d.doc_id, 0)
            and d.version >= removed.get(d.doc_id, 0)
        )
    ]


async def _generations(tx: SqlTx, tenant_id: str, user_id: str) -> tuple[int, int]:
    row = await tx.fetchone(
        "SELECT generation, rebuild_generation FROM ranker_users WHERE tenant_id = ? AND user_id = ?",
        (tenant_id, user_id),
    )
    return (int(row[0]), int(row[1])) if row else (0, 0)


async def _bump(tx: SqlTx, tenant_id: str, user_id: str, rebuild: bool) -> int:
    # Called under the user's write lock, so reading then writing the generation is safe.
    current, rebuilt = await _generations(tx, tenant_id, user_id)
    generation = current + 1
    await tx.execute(
        "INSERT INTO ranker_users (tenant_id, user_id, generation, rebuild_generation) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (tenant_id, user_id) DO UPDATE SET generation = excluded.generation, "
        "rebuild_generation = excluded.rebuild_generation",
        (tenant_id, user_id, generation, generation if rebuild else rebuilt),
    )
    return generation


async def _write(
    tx: SqlTx,
    tenant_id: str,
    user_id: str,
    docs: Sequence[StoredDoc],
    generation: int,
    *,
    clear_removals: bool = True,
) -> None:
    await tx.executemany(
        "INSERT INTO ranker_documents (tenant_id, user_id, doc_id, kind, payload, change_generation, version, "
        "vector, terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, doc_id) DO UPDATE SET "
        "kind = excluded.kind, payload = excluded.payload, change_generation = excluded.change_generation, "
        "version = excluded.version, vector = excluded.vector, terms = excluded.terms",
        [
            (
                tenant_id,
                user_id,
                d.doc_id,
                d.kind,
                d.payload,
                generation,
                d.version,
                d.vector,
                d.terms,
            )
            for d in docs
        ],
    )
    if not clear_removals:
        return
    # A document written again is no longer removed.
    await tx.executemany(
        "DELETE FROM ranker_removals WHERE tenant_id = ? AND user_id = ? AND doc_id = ?",
        [(tenant_id, user_id, d.doc_id) for d in docs],
    )


def _docs(rows: Sequence[Row]) -> list[StoredDoc]:
    return [
        StoredDoc(
            str(doc_id), int(kind), bytes(payload), int(version), bytes(vector or b""), terms or ""
        )
        for doc_id, kind, payload, version, vector, terms in rows
    ]


class SqlRankerStore:
    """Writers of one user serialise on the user's lock key; reads take no lock and
    read again when a write committed meanwhile, so documents and generation agree."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @classmethod
    async def open(cls, storage_url: str, data_dir: Path) -> SqlRankerStore:
        return cls(await open_database(storage_url, ENGINE, migrations_for, data_dir))

    async def _consistent(
        self, tenant_id: str, user_id: str, read: Callable[[SqlTx, int, int], Awaitable[T]]
    ) -> T:
        # Every commit raises the generation: unchanged around the read means no write in between.
        async with self._db.read() as tx:
            while True:
                before = await _generations(tx, tenant_id, user_id)
                result = await read(tx, *before)
                if await _generations(tx, tenant_id, user_id) == before:
                    return result

    async def generation(self, tenant_id: str, user_id: str) -> int:
        async with self._db.read() as tx:
            return (await _generations(tx, tenant_id, user_id))[0]

    async def upsert(
        self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]
    ) -> tuple[list[str], int]:
        async with self._db.write(tenant_id, user_id) as tx:
            admitted = await _admitted(tx, tenant_id, user_id, docs)
            if not admitted:
                return [], (await _generations(tx, tenant_id, user_id))[0]
            generation = await _bump(tx, tenant_id, user_id, rebuild=False)
            await _write(tx, tenant_id, user_id, admitted, generation)
        return [d.doc_id for d in admitted], generation

    async def remove(
        self, tenant_id: str, user_id: str, doc_ids: Sequence[str], version: int = 0
    ) -> tuple[list[str], int]:
        wanted = sorted(set(doc_ids))
        async with self._db.write(tenant_id, user_id) as tx:
            if not wanted:
                return [], (await _generations(tx, tenant_id, user_id))[0]
            stored = await _versions(tx, tenant_id, user_id, "ranker_documents", wanted)
            # A versioned removal leaves a document a change of its version or later wrote.
            existing = sorted(d for d, v in stored.items() if version == 0 or v < version)
            # Ids (never content) remembered so an older upsert arriving later stays out.
            marked = [d for d in wanted if d not in stored or d in existing] if version > 0 else []
            if version > 0:
                previous = await _versions(tx, tenant_id, user_id, "ranker_removals", marked)
                marked = [d for d in marked if previous.get(d, 0) < version or d in existing]
            if not existing and not marked:
                return [], (await _generations(tx, tenant_id, user_id))[0]
            generation = await _bump(tx, tenant_id, user_id, rebuild=False)
            await tx.executemany(
                "DELETE FROM ranker_documents WHERE tenant_id = ? AND user_id = ? AND doc_id = ?",
                [(tenant_id, user_id, doc_id) for doc_id in existing],
            )
            await tx.executemany(
                "INSERT INTO ranker_removals (tenant_id, user_id, doc_id, change_generation, version) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, doc_id) DO UPDATE SET "
                "change_generation = excluded.change_generation, "
                "version = CASE WHEN excluded.version > ranker_removals.version "
                "THEN excluded.version ELSE ranker_removals.version END",
                [
                    (tenant_id, user_id, doc_id, generation, version)
                    for doc_id in sorted({*existing, *marked})
                ],
            )
        return existing, generation

    async def replace_all(
        self,
        tenant_id: str,
        user_id: str,
        docs: Sequence[StoredDoc],
        if_generation: int | None = None,
    ) -> int | None:
        async with self._db.write(tenant_id, user_id) as tx:
            if (
                if_generation is not None
                and (await _generations(tx, tenant_id, user_id))[0] != if_generation
            ):
                return None
            generation = await _bump(tx, tenant_id, user_id, rebuild=True)
            await tx.execute(
                "DELETE FROM ranker_documents WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
            # Versioned removals stay (ids and numbers only): a rebuild must not let a late,
            # older upsert bring a removed document back.
            await tx.execute(
                "DELETE FROM ranker_removals WHERE tenant_id = ? AND user_id = ? AND version = 0",
                (tenant_id, user_id),
            )
            await _write(tx, tenant_id, user_id, docs, generation, clear_removals=False)
        return generation

    async def forget_user(self, tenant_id: str, user_id: str, version: int = 0) -> int:
        async with self._db.write(tenant_id, user_id) as tx:
            if version > await _forgotten_version(tx, tenant_id, user_id):
                # A number only: upserts of this version or older, arriving late, stay out.
                await tx.execute(
                    "INSERT INTO ranker_users (tenant_id, user_id, generation, rebuild_generation, "
                    "forgotten_version) VALUES (?, ?, 0, 0, ?) ON CONFLICT (tenant_id, user_id) "
                    "DO UPDATE SET forgotten_version = excluded.forgotten_version",
                    (tenant_id, user_id, version),
                )
            if (await _generations(tx, tenant_id, user_id))[0] == 0:
                return 0
            row = await tx.fetchone(
                "SELECT COUNT(*) FROM ranker_documents WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
            count = int(row[0]) if row else 0
            # The user's row stays (ids and a number only): a lower generation would let
            # another process keep serving the index it holds in memory.
            await _bump(tx, tenant_id, user_id, rebuild=True)
            for table in ("ranker_documents", "ranker_removals"):
                await tx.execute(
                    f"DELETE FROM {table} WHERE tenant_id = ? AND user_id = ?", (tenant_id, user_id)
                )
        return count

    async def reclaim_erased(self) -> bool:
        return await self._db.reclaim_erased(ERASED_TABLES)

    async def load(self, tenant_id: str, user_id: str) -> Snapshot:
        async def read(tx: SqlTx, generation: int, _rebuilt: int) -> Snapshot:
            rows = await tx.fetchall(
                "SELECT doc_id, kind, payload, version, vector, terms FROM ranker_documents WHERE tenant_id = ? AND user_id = ? "
                "ORDER BY doc_id",
                (tenant_id, user_id),
            )
            return Snapshot(generation, _docs(rows))

        return await self._consistent(tenant_id, user_id, read)

    async def changes_since(self, tenant_id: str, user_id: str, generation: int) -> Changes | None:
        async def read(tx: SqlTx, current: int, rebuilt: int) -> Changes | None:
            if rebuilt > generation:
                return None
            scope = (tenant_id, user_id, generation)
            upserted = await tx.fetchall(
                "SELECT doc_id, kind, payload, version, vector, terms FROM ranker_documents WHERE tenant_id = ? AND user_id = ? "
                "AND change_generation > ? ORDER BY doc_id",
                scope,
            )
            removed = await tx.fetchall(
                "SELECT doc_id FROM ranker_removals WHERE tenant_id = ? AND user_id = ? "
                "AND change_generation > ? ORDER BY doc_id",
                scope,
            )
            return Changes(current, _docs(upserted), [str(row[0]) for row in removed])

        return await self._consistent(tenant_id, user_id, read)

    async def close(self) -> None:
        await self._db.close()
