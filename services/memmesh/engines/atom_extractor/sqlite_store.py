"""The capsule in an SQLite file (one per engine under data_dir)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE capsule_atoms (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, atom_id TEXT NOT NULL,
                atom_key TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, atom_id))""",
            "CREATE INDEX capsule_atoms_by_key ON capsule_atoms (tenant_id, user_id, atom_key, atom_id)",
            """CREATE TABLE capsule_markers (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, marker TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, marker))""",
            """CREATE TABLE capsule_corrections (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
                heard TEXT NOT NULL, meant TEXT NOT NULL, record_time_us INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id, turn_id))""",
            """CREATE TABLE capsule_rejections (
                seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                reject_time_us INTEGER NOT NULL, body TEXT NOT NULL)""",
            "CREATE INDEX capsule_rejections_by_user ON capsule_rejections (tenant_id, user_id, reject_time_us)",
            """CREATE TABLE capsule_provenance (
                seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                record_time_us INTEGER NOT NULL, body TEXT NOT NULL)""",
            "CREATE INDEX capsule_provenance_by_user ON capsule_provenance (tenant_id, user_id, record_time_us)",
            """CREATE TABLE capsule_session_refs (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, atom_ids TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, session_id))""",
            """CREATE TABLE capsule_effects (
                seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                kind TEXT NOT NULL, payload TEXT NOT NULL)""",
            "CREATE INDEX capsule_effects_by_user ON capsule_effects (tenant_id, user_id, seq)",
        ),
    ),
)


class SqliteCapsuleStore:
    """One connection; each call is a short local transaction run on the event loop, and
    BEGIN IMMEDIATE serialises writers across processes sharing the file."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> SqliteCapsuleStore:
        return cls(open_sqlite(path, MIGRATIONS))

    async def load_atoms(self, tenant_id: str, user_id: str) -> list[AtomRecord]:
        rows = self._db.execute(
            "SELECT body FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? ORDER BY atom_key, atom_id",
            (tenant_id, user_id),
        ).fetchall()
        return [codec.atom_of(row[0]) for row in rows]

    async def list_atoms(
        self, tenant_id: str, user_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[AtomRecord]:
        key, atom_id = after or ("", "")
        rows = self._db.execute(
            "SELECT body FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? AND (atom_key, atom_id) > (?, ?) "
            "ORDER BY atom_key, atom_id LIMIT ?",
            (tenant_id, user_id, key, atom_id, limit),
        ).fetchall()
        return [codec.atom_of(row[0]) for row in rows]

    async def session_refs(self, tenant_id: str, user_id: str, session_id: str) -> tuple[str, ...]:
        row = self._db.execute(
            "SELECT atom_ids FROM capsule_session_refs WHERE tenant_id = ? AND user_id = ? AND session_id = ?",
            (tenant_id, user_id, session_id),
        ).fetchone()
        return codec.refs_of(row[0]) if row else ()

    async def is_processed(self, tenant_id: str, user_id: str, marker: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM capsule_markers WHERE tenant_id = ? AND user_id = ? AND marker = ?",
            (tenant_id, user_id, marker),
        ).fetchone()
        return row is not None

    async def commit(self, tenant_id: str, user_id: str, commit: CapsuleCommit) -> bool:
        db, scope = self._db, (tenant_id, user_id)
        db.execute("BEGIN IMMEDIATE")
        try:
            marked = db.execute(
                "INSERT INTO capsule_markers VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (*scope, commit.marker),
            )
            if marked.rowcount == 0:
                db.execute("ROLLBACK")
                return False
            self._write(scope, commit)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return True

    def _write(self, scope: tuple[str, str], commit: CapsuleCommit) -> None:
        db = self._db
        for atom, expected in commit.upserts:
            body = codec.atom_body(atom)
            if expected == 0:
                written = db.execute(
                    "INSERT INTO capsule_atoms VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (*scope, atom.atom_id, atom.key, atom.version, body),
                )
            else:
                written = db.execute(
                    "UPDATE capsule_atoms SET atom_key = ?, version = ?, body = ? "
                    "WHERE tenant_id = ? AND user_id = ? AND atom_id = ? AND version = ?",
                    (atom.key, atom.version, body, *scope, atom.atom_id, expected),
                )
            if written.rowcount != 1:
                raise VersionMismatch(f"atom {atom.atom_id} changed concurrently")
        db.executemany(
            "DELETE FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? AND atom_id = ?",
            [(*scope, atom_id) for atom_id in commit.deletes],
        )
        db.executemany(
            "INSERT INTO capsule_corrections VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(*scope, p.turn_id, p.heard, p.meant, p.record_time_us) for p in commit.corrections],
        )
        db.executemany(
            "INSERT INTO capsule_rejections (tenant_id, user_id, reject_time_us, body) VALUES (?, ?, ?, ?)",
            [(*scope, r.reject_time_us, codec.rejection_body(r)) for r in commit.rejections],
        )
        db.executemany(
            "INSERT INTO capsule_provenance (tenant_id, user_id, record_time_us, body) VALUES (?, ?, ?, ?)",
            [(*scope, p.record_time_us, codec.provenance_body(p)) for p in commit.provenance],
        )
        if commit.session_refs is not None:
            session_id, atom_ids = commit.session_refs
            db.execute(
                "INSERT INTO capsule_session_refs VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant_id, user_id, session_id) DO UPDATE SET atom_ids = excluded.atom_ids",
                (*scope, session_id, codec.refs_body(atom_ids)),
            )
        db.executemany(
            "INSERT INTO capsule_effects (tenant_id, user_id, kind, payload) VALUES (?, ?, ?, ?)",
            [(*scope, e.kind.value, codec.effect_payload(e)) for e in commit.effects],
        )

    async def list_corrections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[CorrectionPair]:
        rows = self._db.execute(
            "SELECT heard, meant, turn_id, record_time_us FROM capsule_corrections WHERE tenant_id = ? AND user_id = ? "
            "ORDER BY record_time_us DESC, turn_id DESC LIMIT ?",
            (tenant_id, user_id, limit),
        ).fetchall()
        return [CorrectionPair(*row) for row in rows]

    async def list_rejections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[RejectionEntry]:
        rows = self._db.execute(
            "SELECT body FROM capsule_rejections WHERE tenant_id = ? AND user_id = ? "
            "ORDER BY reject_time_us DESC, seq DESC LIMIT ?",
            (tenant_id, user_id, limit),
        ).fetchall()
        return [codec.rejection_of(row[0]) for row in rows]

    async def list_provenance(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[ProvenanceEntry]:
        rows = self._db.execute(
            "SELECT body FROM capsule_provenance WHERE tenant_id = ? AND user_id = ? "
            "ORDER BY record_time_us DESC, seq DESC LIMIT ?",
            (tenant_id, user_id, limit),
        ).fetchall()
        return [codec.provenance_of(row[0]) for row in rows]

    async def pending_effects(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[tuple[int, Effect]]:
        rows = self._db.execute(
            "SELECT seq, kind, payload FROM capsule_effects WHERE tenant_id = ? AND user_id = ? ORDER BY seq LIMIT ?",
            (tenant_id, user_id, limit),
        ).fetchall()
        return [(row[0], codec.effect_of(row[1], row[2])) for row in rows]

    async def complete_effects(self, tenant_id: str, user_id: str, sequences: list[int]) -> None:
        self._db.executemany(
            "DELETE FROM capsule_effects WHERE tenant_id = ? AND user_id = ? AND seq = ?",
            [(tenant_id, user_id, seq) for seq in sequences],
        )

    async def count_pending(self, tenant_id: str, user_id: str) -> int:
        row = self._db.execute(
            "SELECT COUNT(*) FROM capsule_effects WHERE tenant_id = ? AND user_id = ?",
            (tenant_id, user_id),
        ).fetchone()
        return int(row[0])

    async def close(self) -> None:
        self._db.close()
