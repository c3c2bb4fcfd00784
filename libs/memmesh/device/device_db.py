"""The device file: vault and outbox share one SQLite file, so a write and its mirror
entry commit together and survive a crash together."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memmesh.storage.migrations import Migration
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE vault_records (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                key TEXT NOT NULL,
                version INTEGER NOT NULL,
                tombstone INTEGER NOT NULL,
                origin_cursor INTEGER NOT NULL,
                sealed BLOB NOT NULL,
                PRIMARY KEY (tenant_id, user_id, kind, key)
            )""",
            """CREATE TABLE outbox_items (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                item_id TEXT NOT NULL,
                item_kind TEXT NOT NULL,
                logical_key TEXT NOT NULL,
                version INTEGER NOT NULL,
                tombstone INTEGER NOT NULL,
                ciphertext BLOB NOT NULL,
                create_time_us INTEGER NOT NULL,
                retry_count INTEGER NOT NULL DEFAULT 0,
                last_error TEXT NOT NULL DEFAULT '',
                UNIQUE (tenant_id, user_id, item_id)
            )""",
            """CREATE TABLE outbox_acked (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                item_id TEXT NOT NULL,
                cursor INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id, item_id)
            )""",
            """CREATE TABLE sync_cursors (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                cursor INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
        ),
    ),
    # Learning packages applied on this device (seed 001 §2.4.4): versions kept for rollback.
    Migration(
        2,
        (
            """CREATE TABLE learning_packages (
                package_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                sha256 TEXT NOT NULL,
                artifact BLOB NOT NULL,
                rolled_back INTEGER NOT NULL,
                PRIMARY KEY (package_id, version)
            )""",
        ),
    ),
)


def open_device_db(path: Path) -> sqlite3.Connection:
    """Open (creating) the device file with its schema."""
    return open_sqlite(path, MIGRATIONS)


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction; joins the caller's when one is already open."""
    if db.in_transaction:
        yield db
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
