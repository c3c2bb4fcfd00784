"""The learning stores in SQL, in their own database beside the capsule's (SQLite file
`atom_extractor_learning.sqlite3`, PostgreSQL schema `atom_extractor_learning`). Capsules are
stored sealed, with the user's wrapped data key in its own table (deleting that row shreds
them); packs with their audit fields; global signals under contributor pseudonyms only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memmesh.engines.atom_extractor.learning.global_signals import Released, Signal
from memmesh.engines.atom_extractor.learning.ports import SealedCapsule
from memmesh.engines.atom_extractor.learning.vocabulary_pack import PackVersion, entries_of
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, SqlTx, open_database

ENGINE = "atom_extractor_learning"


def migrations_for(dialect: Dialect) -> tuple[Migration, ...]:
    big, blob = dialect.big_int, dialect.blob
    return (
        Migration(
            1,
            (
                f"""CREATE TABLE learning_keys (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, wrapped_key {blob} NOT NULL,
                PRIMARY KEY (tenant_id, user_id))""",
                f"""CREATE TABLE learning_capsules (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, version {big} NOT NULL,
                sealed {blob} NOT NULL, PRIMARY KEY (tenant_id, user_id))""",
                f"""CREATE TABLE learning_consent (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, opted_in INTEGER NOT NULL,
                set_time_us {big} NOT NULL, PRIMARY KEY (tenant_id, user_id))""",
                f"""CREATE TABLE vocabulary_packs (
                tenant_id TEXT NOT NULL, version {big} NOT NULL, body {blob} NOT NULL,
                sha256 TEXT NOT NULL, added_by TEXT NOT NULL, reason TEXT NOT NULL,
                add_time_us {big} NOT NULL, PRIMARY KEY (tenant_id, version))""",
                """CREATE TABLE global_signals (
                signal_id TEXT NOT NULL PRIMARY KEY, kind TEXT NOT NULL, heard TEXT NOT NULL,
                meant TEXT NOT NULL)""",
                """CREATE TABLE global_contributions (
                signal_id TEXT NOT NULL, contributor TEXT NOT NULL,
                PRIMARY KEY (signal_id, contributor))""",
                "CREATE INDEX global_contributions_by_contributor ON global_contributions (contributor)",
                f"""CREATE TABLE learning_package_versions (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, package_id TEXT NOT NULL,
                version {big} NOT NULL, content_sha256 TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, package_id, version))""",
            ),
        ),
    )


Mutation = Callable[[SealedCapsule | None], SealedCapsule | None]


class SqlLearningStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def database(self) -> Database:
        return self._db

    @classmethod
    async def open(cls, storage_url: str, data_dir: Path) -> SqlLearningStore:
        return cls(await open_database(storage_url, ENGINE, migrations_for, data_dir))

    async def close(self) -> None:
        await self._db.close()

    async def read_capsule(self, tenant_id: str, user_id: str) -> SealedCapsule | None:
        async with self._db.read() as tx:
            return await _capsule(tx, tenant_id, user_id)

    async def update_capsule(self, tenant_id: str, user_id: str, mutate: Mutation) -> None:
        """Read, change and write one capsule under the user's write lock (None: no write)."""
        async with self._db.write("learning", tenant_id, user_id) as tx:
            stored = await _capsule(tx, tenant_id, user_id)
            updated = mutate(stored)
            if updated is None:
                return
            if stored is None or stored.wrapped_key != updated.wrapped_key:
                await tx.execute(
                    "INSERT INTO learning_keys VALUES (?, ?, ?) ON CONFLICT (tenant_id, user_id) "
                    "DO UPDATE SET wrapped_key = excluded.wrapped_key",
                    (tenant_id, user_id, updated.wrapped_key),
                )
            await tx.execute(
                "INSERT INTO learning_capsules VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, user_id) "
                "DO UPDATE SET version = excluded.version, sealed = excluded.sealed",
                (tenant_id, user_id, updated.version, updated.sealed),
            )

    async def wrapped_key(
        self, tenant_id: str, user_id: str, new_wrapped: bytes | None
    ) -> bytes | None:
        """The user's wrapped data key; when they have none, `new_wrapped` becomes it (the
        first writer wins under the user's write lock, so one key serves every record)."""
        async with self._db.read() as tx:
            found = await _wrapped_key(tx, tenant_id, user_id)
        if found is not None or new_wrapped is None:
            return found
        async with self._db.write("learning", tenant_id, user_id) as tx:
            await tx.execute(
                "INSERT INTO learning_keys VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (tenant_id, user_id, new_wrapped),
            )
            return await _wrapped_key(tx, tenant_id, user_id)

    async def shred(self, tenant_id: str, user_id: str, contributor: str) -> None:
        """Delete the user's data key first (crypto-shredding), then everything else of theirs."""
        async with self._db.write("learning", tenant_id, user_id) as tx:
            for table in (
                "learning_keys",
                "learning_capsules",
                "learning_consent",
                "learning_package_versions",
            ):
                await tx.execute(
                    f"DELETE FROM {table} WHERE tenant_id = ? AND user_id = ?",  # noqa: S608
                    (tenant_id, user_id),
                )
            await tx.execute(
                "DELETE FROM global_contributions WHERE contributor = ?", (contributor,)
            )
        await self._db.reclaim_erased(("learning_keys", "learning_capsules"))

    async def opted_in(self, tenant_id: str, user_id: str) -> bool:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                "SELECT opted_in FROM learning_consent WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
        return row is not None and bool(row[0])

    async def set_consent(
        self, tenant_id: str, user_id: str, opted_in: bool, contributor: str, now_us: int
    ) -> None:
        """Record the consent; withdrawing it also withdraws every contribution."""
        async with self._db.write("learning", tenant_id, user_id) as tx:
            await tx.execute(
                "INSERT INTO learning_consent VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, user_id) "
                "DO UPDATE SET opted_in = excluded.opted_in, set_time_us = excluded.set_time_us",
                (tenant_id, user_id, int(opted_in), now_us),
            )
            if not opted_in:
                await tx.execute(
                    "DELETE FROM global_contributions WHERE contributor = ?", (contributor,)
                )

    async def contribute(self, contributor: str, signals: list[Signal]) -> None:
        if not signals:
            return
        async with self._db.write("global-signals") as tx:
            await tx.executemany(
                "INSERT INTO global_signals VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(s.signal_id, s.kind, s.heard, s.meant) for s in signals],
            )
            await tx.executemany(
                "INSERT INTO global_contributions VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(s.signal_id, contributor) for s in signals],
            )

    async def signal_counts(self, min_contributors: int) -> list[Released]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT s.kind, s.heard, s.meant, COUNT(*) FROM global_signals s "
                "JOIN global_contributions c ON c.signal_id = s.signal_id "
                "GROUP BY s.signal_id, s.kind, s.heard, s.meant HAVING COUNT(*) >= ?",
                (min_contributors,),
            )
        return [Released(Signal(str(k), str(h), str(m)), int(n)) for k, h, m, n in rows]

    async def put_pack(
        self, tenant_id: str, body: bytes, sha256: str, added_by: str, reason: str, now_us: int
    ) -> tuple[int, bool]:
        """Store a new version unless the latest has the same hash: (version, unchanged)."""
        async with self._db.write("vocabulary-pack", tenant_id) as tx:
            latest = await tx.fetchone(
                "SELECT version, sha256 FROM vocabulary_packs WHERE tenant_id = ? "
                "ORDER BY version DESC LIMIT 1",
                (tenant_id,),
            )
            if latest is not None and str(latest[1]) == sha256:
                return int(latest[0]), True
            version = 1 if latest is None else int(latest[0]) + 1
            await tx.execute(
                "INSERT INTO vocabulary_packs VALUES (?, ?, ?, ?, ?, ?, ?)",
                (tenant_id, version, body, sha256, added_by, reason, now_us),
            )
        return version, False

    async def pack_versions(self, tenant_id: str, limit: int) -> list[PackVersion]:
        """Newest first."""
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT version, body, added_by, reason, add_time_us, sha256 FROM vocabulary_packs "
                "WHERE tenant_id = ? ORDER BY version DESC LIMIT ?",
                (tenant_id, limit),
            )
        return [
            PackVersion(int(v), entries_of(bytes(b)), str(who), str(why), int(t), str(sha))
            for v, b, who, why, t, sha in rows
        ]

    async def package_version(
        self, tenant_id: str, user_id: str, package_id: str, content_sha256: str
    ) -> int:
        """The latest version if it has this content, else the next one (recorded now)."""
        async with self._db.write("learning", tenant_id, user_id) as tx:
            latest = await tx.fetchone(
                "SELECT version, content_sha256 FROM learning_package_versions "
                "WHERE tenant_id = ? AND user_id = ? AND package_id = ? "
                "ORDER BY version DESC LIMIT 1",
                (tenant_id, user_id, package_id),
            )
            if latest is not None and str(latest[1]) == content_sha256:
                return int(latest[0])
            version = 1 if latest is None else int(latest[0]) + 1
            await tx.execute(
                "INSERT INTO learning_package_versions VALUES (?, ?, ?, ?, ?)",
                (tenant_id, user_id, package_id, version, content_sha256),
            )
        return version


async def _wrapped_key(tx: SqlTx, tenant_id: str, user_id: str) -> bytes | None:
    row = await tx.fetchone(
        "SELECT wrapped_key FROM learning_keys WHERE tenant_id = ? AND user_id = ?",
        (tenant_id, user_id),
    )
    return None if row is None else bytes(row[0])


async def _capsule(tx: SqlTx, tenant_id: str, user_id: str) -> SealedCapsule | None:
    """The user's key and capsule; a key with no capsule yet (it sealed correction pairs
    first) comes with version 0 and no sealed bytes, so the profile's first write keeps it."""
    row = await tx.fetchone(
        "SELECT k.wrapped_key, c.version, c.sealed FROM learning_keys k "
        "LEFT JOIN learning_capsules c ON c.tenant_id = k.tenant_id AND c.user_id = k.user_id "
        "WHERE k.tenant_id = ? AND k.user_id = ?",
        (tenant_id, user_id),
    )
    if row is None:
        return None
    if row[1] is None:
        return SealedCapsule(bytes(row[0]), 0, b"")
    return SealedCapsule(bytes(row[0]), int(row[1]), bytes(row[2]))
