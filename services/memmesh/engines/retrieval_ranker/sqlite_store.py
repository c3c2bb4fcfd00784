"""Ranker documents in an SQLite file."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from memmesh.engines.retrieval_ranker.store import Changes, Snapshot, StoredDoc
from memmesh.storage.migrations import Migration
from memmesh.storage.sqlite_db import open_sqlite

T = TypeVar("T")

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE ranker_users (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                generation INTEGER NOT NULL,
                rebuild_generation INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
            """CREATE TABLE ranker_documents (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                doc_id TEXT NOT NULL,
                kind INTEGER NOT NULL,
                payload BLOB NOT NULL,
                change_generation INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id, doc_id)
            )""",
            "CREATE INDEX ranker_documents_changes ON ranker_documents (tenant_id, user_id, change_generation)",
            # Ids only (never content), so that other processes learn what to drop.
            """CREATE TABLE ranker_removals (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                doc_id TEXT NOT NULL,
                change_generation INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id, doc_id)
            )""",
        ),
    ),
)


class SqliteRankerStore:
    """One connection on the event loop: each call is a short local transaction, and
    BEGIN IMMEDIATE serialises writers across processes sharing the file."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> SqliteRankerStore:
        return cls(open_sqlite(path, MIGRATIONS))

    def _generations(self, tenant_id: str, user_id: str) -> tuple[int, int]:
        row = self._db.execute(
            "SELECT generation, rebuild_generation FROM ranker_users WHERE tenant_id = ? AND user_id = ?",
            (tenant_id, user_id),
        ).fetchone()
        return (row[0], row[1]) if row else (0, 0)

    def _bump(self, tenant_id: str, user_id: str, rebuild: bool) -> int:
        generation = self._generations(tenant_id, user_id)[0] + 1
        self._db.execute(
            "INSERT INTO ranker_users (tenant_id, user_id, generation, rebuild_generation) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET generation = excluded.generation, "
            "rebuild_generation = CASE WHEN ? THEN excluded.generation ELSE rebuild_generation END",
            (tenant_id, user_id, generation, generation if rebuild else 0, rebuild),
        )
        return generation

    def _write(self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc], generation: int) -> None:
        self._db.executemany(
            "INSERT INTO ranker_documents (tenant_id, user_id, doc_id, kind, payload, change_generation) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, doc_id) DO UPDATE SET "
            "kind = excluded.kind, payload = excluded.payload, change_generation = excluded.change_generation",
            [(tenant_id, user_id, d.doc_id, d.kind, d.payload, generation) for d in docs],
        )
        self._db.executemany(
            "DELETE FROM ranker_removals WHERE tenant_id = ? AND user_id = ? AND doc_id = ?",
            [(tenant_id, user_id, d.doc_id) for d in docs],
        )

    def _transaction(self, work: Callable[[], T], begin: str = "BEGIN IMMEDIATE") -> T:
        self._db.execute(begin)
        try:
            result = work()
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return result

    async def generation(self, tenant_id: str, user_id: str) -> int:
        return self._generations(tenant_id, user_id)[0]

    async def upsert(self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]) -> int:
        def work() -> int:
            generation = self._bump(tenant_id, user_id, rebuild=False)
            self._write(tenant_id, user_id, docs, generation)
            return generation

        return self._transaction(work)

    async def remove(self, tenant_id: str, user_id: str, doc_ids: Sequence[str]) -> tuple[list[str], int]:
        def work() -> tuple[list[str], int]:
            wanted = sorted(set(doc_ids))
            existing = sorted(
                row[0]
                for row in self._db.execute(
                    "SELECT doc_id FROM ranker_documents WHERE tenant_id = ? AND user_id = ? "
                    f"AND doc_id IN ({','.join('?' * len(wanted))})",
                    (tenant_id, user_id, *wanted),
                )
            )
            if not existing:
                return [], self._generations(tenant_id, user_id)[0]
            generation = self._bump(tenant_id, user_id, rebuild=False)
            self._db.executemany(
                "DELETE FROM ranker_documents WHERE tenant_id = ? AND user_id = ? AND doc_id = ?",
                [(tenant_id, user_id, doc_id) for doc_id in existing],
            )
            self._db.executemany(
                "INSERT INTO ranker_removals (tenant_id, user_id, doc_id, change_generation) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant_id, user_id, doc_id) DO UPDATE SET change_generation = excluded.change_generation",
                [(tenant_id, user_id, doc_id, generation) for doc_id in existing],
            )
            return existing, generation

        return self._transaction(work)

    async def replace_all(self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]) -> int:
        def work() -> int:
            generation = self._bump(tenant_id, user_id, rebuild=True)
            for table in ("ranker_documents", "ranker_removals"):
                self._db.execute(f"DELETE FROM {table} WHERE tenant_id = ? AND user_id = ?", (tenant_id, user_id))
            self._write(tenant_id, user_id, docs, generation)
            return generation

        return self._transaction(work)

    async def load(self, tenant_id: str, user_id: str) -> Snapshot:
        def work() -> Snapshot:
            rows = self._db.execute(
                "SELECT doc_id, kind, payload FROM ranker_documents WHERE tenant_id = ? AND user_id = ? ORDER BY doc_id",
                (tenant_id, user_id),
            ).fetchall()
            docs = [StoredDoc(doc_id, kind, bytes(payload)) for doc_id, kind, payload in rows]
            return Snapshot(self._generations(tenant_id, user_id)[0], docs)

        # A read transaction: the documents and the generation come from one snapshot.
        return self._transaction(work, "BEGIN")

    async def changes_since(self, tenant_id: str, user_id: str, generation: int) -> Changes | None:
        def work() -> Changes | None:
            current, rebuilt = self._generations(tenant_id, user_id)
            if rebuilt > generation:
                return None
            scope = (tenant_id, user_id, generation)
            upserted = [
                StoredDoc(doc_id, kind, bytes(payload))
                for doc_id, kind, payload in self._db.execute(
                    "SELECT doc_id, kind, payload FROM ranker_documents WHERE tenant_id = ? AND user_id = ? "
                    "AND change_generation > ? ORDER BY doc_id",
                    scope,
                )
            ]
            removed = [
                row[0]
                for row in self._db.execute(
                    "SELECT doc_id FROM ranker_removals WHERE tenant_id = ? AND user_id = ? "
                    "AND change_generation > ? ORDER BY doc_id",
                    scope,
                )
            ]
            return Changes(current, upserted, removed)

        # A read transaction: the documents and the generation come from one snapshot.
        return self._transaction(work, "BEGIN")

    async def close(self) -> None:
        self._db.close()
