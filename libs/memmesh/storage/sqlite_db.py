"""Opening an engine's SQLite file with its migrations applied."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from memmesh.storage.migrations import Migration


def open_sqlite(path: Path, migrations: Sequence[Migration]) -> sqlite3.Connection:
    """Open (creating) the file in WAL mode and apply pending migrations.

    WAL with synchronous=NORMAL keeps every committed transaction through a process
    crash (kill -9); only an OS crash may lose the last commits.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA busy_timeout=5000")
    connection.execute("PRAGMA foreign_keys=ON")
    # Deleted rows are overwritten, not left readable in free pages (forget means forget).
    connection.execute("PRAGMA secure_delete=ON")
    apply_sqlite_migrations(connection, migrations)
    return connection


def apply_sqlite_migrations(
    connection: sqlite3.Connection, migrations: Sequence[Migration]
) -> None:
    """Apply the migrations not yet recorded, each in its own transaction."""
    connection.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)")
    for migration in sorted(migrations, key=lambda m: m.version):
        connection.execute("BEGIN IMMEDIATE")
        try:
            done = connection.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
            ).fetchone()
            if done is None:
                for statement in migration.statements:
                    connection.execute(statement)
                connection.execute(
                    "INSERT INTO schema_migrations (version) VALUES (?)", (migration.version,)
                )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
