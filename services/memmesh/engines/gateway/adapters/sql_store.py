"""The gateway's database: only its effect outbox (SQLite under data_dir, or the PostgreSQL
schema `gateway`). The gateway holds no memory; the outbox holds a turn's derived effects
only until they are delivered."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memmesh.outbox import outbox_migration, outbox_trace_migration
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, open_database

ENGINE = "gateway"


def migrations_for(dialect: Dialect) -> Sequence[Migration]:
    """Version 1 is the retired pending-extraction queue (its rows move to the outbox on open)."""
    big = dialect.big_int
    legacy = Migration(
        1,
        (
            f"""CREATE TABLE pending_extractions (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
                session_id TEXT NOT NULL, text TEXT NOT NULL, time_us {big} NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0, next_attempt_us {big} NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant_id, user_id, turn_id))""",
            "CREATE INDEX pending_extractions_due ON pending_extractions (next_attempt_us)",
        ),
    )
    return (legacy, outbox_migration(dialect, 2), outbox_trace_migration())


async def open_gateway_database(storage_url: str, data_dir: Path) -> Database:
    """The gateway's database with its migrations applied."""
    return await open_database(storage_url, ENGINE, migrations_for, data_dir)


@dataclass(frozen=True)
class LegacyExtraction:
    """A user turn the retired queue still held for extraction."""

    tenant_id: str
    user_id: str
    turn_id: str
    session_id: str
    text: str
    time_us: int


async def legacy_extractions(database: Database) -> list[LegacyExtraction]:
    """Turns left in the retired queue, oldest first."""
    async with database.read() as tx:
        rows = await tx.fetchall(
            "SELECT tenant_id, user_id, turn_id, session_id, text, time_us FROM pending_extractions "
            "ORDER BY time_us, turn_id"
        )
    return [LegacyExtraction(r[0], r[1], r[2], r[3], r[4], int(r[5])) for r in rows]


async def forget_legacy_extraction(database: Database, item: LegacyExtraction) -> None:
    """Drop a turn from the retired queue once the outbox holds it."""
    async with database.write("pending_extractions", item.tenant_id, item.user_id) as tx:
        await tx.execute(
            "DELETE FROM pending_extractions WHERE tenant_id = ? AND user_id = ? AND turn_id = ?",
            (item.tenant_id, item.user_id, item.turn_id),
        )
