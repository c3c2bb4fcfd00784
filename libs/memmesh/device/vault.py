"""The device vault: continuity records sealed with the device-bound key."""

from __future__ import annotations

import base64
import json
import sqlite3

from memmesh.device.crypto import Sealer, associated_data
from memmesh.device.device_db import transaction
from memmesh.device.records import ContinuityRecord


class StaleVersion(Exception):
    """A write would regress an artifact's version or give one version two contents."""


class Vault:
    """Records of one (tenant, user), at most one per (kind, key), each sealed with
    associated data naming its place, so rows cannot be swapped or edited unnoticed."""

    def __init__(
        self, db: sqlite3.Connection, tenant_id: str, user_id: str, device_key: bytes
    ) -> None:
        self._db = db
        self._tenant = tenant_id
        self._user = user_id
        self._sealer = Sealer(device_key)

    def _binding(self, kind: str, key: str, version: int, tombstone: bool) -> bytes:
        return associated_data("vault", self._tenant, self._user, kind, key, version, tombstone)

    def _row(self, kind: str, key: str) -> tuple[int, bool, int, bytes] | None:
        row = self._db.execute(
            "SELECT version, tombstone, origin_cursor, sealed FROM vault_records "
            "WHERE tenant_id = ? AND user_id = ? AND kind = ? AND key = ?",
            (self._tenant, self._user, kind, key),
        ).fetchone()
        return None if row is None else (int(row[0]), bool(row[1]), int(row[2]), bytes(row[3]))

    def _open(
        self, kind: str, key: str, version: int, tombstone: bool, sealed: bytes
    ) -> ContinuityRecord:
        body = self._sealer.open(sealed, self._binding(kind, key, version, tombstone))
        return ContinuityRecord(kind, key, version, body, tombstone)

    def get(self, kind: str, key: str) -> ContinuityRecord | None:
        """The record of (kind, key), tombstones included; IntegrityError if it was tampered with."""
        row = self._row(kind, key)
        return None if row is None else self._open(kind, key, row[0], row[1], row[3])

    def _write(self, record: ContinuityRecord, origin_cursor: int) -> None:
        sealed = self._sealer.seal(
            record.body, self._binding(record.kind, record.key, record.version, record.tombstone)
        )
        self._db.execute(
            "INSERT INTO vault_records (tenant_id, user_id, kind, key, version, tombstone, origin_cursor, sealed) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, kind, key) DO UPDATE SET "
            "version = excluded.version, tombstone = excluded.tombstone, "
            "origin_cursor = excluded.origin_cursor, sealed = excluded.sealed",
            (
                self._tenant,
                self._user,
                record.kind,
                record.key,
                record.version,
                int(record.tombstone),
                origin_cursor,
                sealed,
            ),
        )

    def put(self, record: ContinuityRecord) -> bool:
        """Store a local write; False when this exact version is already stored.

        Raises StaleVersion for a lower version, or for the stored version with other content.
        """
        with transaction(self._db):
            stored = self.get(record.kind, record.key)
            if stored is not None:
                if stored == record:
                    return False
                if record.version <= stored.version:
                    raise StaleVersion(
                        f"{record.kind}/{record.key}: version {record.version} after {stored.version}"
                    )
            self._write(record, 0)
        return True

    def apply_synced(self, record: ContinuityRecord, cursor: int) -> bool:
        """Apply a record from the mirror; the higher (version, cursor) wins, so replays and
        late older items never regress a key. True when the vault changed."""
        with transaction(self._db):
            row = self._row(record.kind, record.key)
            if row is not None and (record.version, cursor) <= (row[0], row[2]):
                return False
            if row is not None and record == self._open(
                record.kind, record.key, row[0], row[1], row[3]
            ):
                self._db.execute(
                    "UPDATE vault_records SET origin_cursor = ? WHERE tenant_id = ? AND user_id = ? AND kind = ? AND key = ?",
                    (cursor, self._tenant, self._user, record.kind, record.key),
                )
                return False
            self._write(record, cursor)
        return True

    def records(self, include_tombstones: bool = False) -> list[ContinuityRecord]:
        """Every record, sorted by (kind, key); tombstones only when asked."""
        rows = self._db.execute(
            "SELECT kind, key, version, tombstone, sealed FROM vault_records WHERE tenant_id = ? AND user_id = ? "
            "ORDER BY kind, key",
            (self._tenant, self._user),
        ).fetchall()
        opened = [
            self._open(kind, key, int(v), bool(t), bytes(sealed))
            for kind, key, v, t, sealed in rows
        ]
        return [r for r in opened if include_tombstones or not r.tombstone]

    def listing(self) -> bytes:
        """Canonical plaintext listing of the vault (tombstones included): equal vaults give equal bytes."""
        lines = [
            json.dumps(
                [r.kind, r.key, r.version, r.tombstone, base64.b64encode(r.body).decode()],
                separators=(",", ":"),
            )
            for r in self.records(include_tombstones=True)
        ]
        return "\n".join(lines).encode()
