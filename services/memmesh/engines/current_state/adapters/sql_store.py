"""The projection in SQL: one text for SQLite (a file under data_dir) and PostgreSQL
(schema `current_state`); one row per user, saved by compare-and-set on its version.
The same database holds the user's work orders and the outbox of their ledger events
(`work_order_store`)."""

from __future__ import annotations

from pathlib import Path

from memmesh.engines.current_state.domain.state import UserState, decode_state, encode_state
from memmesh.outbox import outbox_migration, outbox_trace_migration
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, open_database

ENGINE = "current_state"

_UPSERT = (
    "INSERT INTO user_states (tenant_id, user_id, version, state) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (tenant_id, user_id) "
)


def migrations_for(dialect: Dialect) -> tuple[Migration, ...]:
    """The projection's schema in the dialect's type names."""
    return (
        Migration(
            1,
            (
                f"""CREATE TABLE user_states (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                version {dialect.big_int} NOT NULL,
                state TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )""",
            ),
        ),
        Migration(
            2,
            (
                f"""CREATE TABLE work_orders (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                work_order_id TEXT NOT NULL,
                title TEXT NOT NULL,
                status TEXT NOT NULL,
                pending_question TEXT NOT NULL,
                summary TEXT NOT NULL,
                thread_id TEXT NOT NULL,
                create_us {dialect.big_int} NOT NULL,
                update_us {dialect.big_int} NOT NULL,
                do_not_mention INTEGER NOT NULL,
                revision {dialect.big_int} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, work_order_id)
            )""",
                "CREATE INDEX work_orders_by_update ON work_orders "
                "(tenant_id, user_id, update_us DESC, work_order_id)",
            ),
        ),
        # The work orders' ledger events, queued in the transaction that changes the order.
        outbox_migration(dialect, 3),
        outbox_trace_migration(),
    )


class SqlStateStore:
    """The projection store over one engine database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @classmethod
    async def open(cls, storage_url: str, data_dir: Path) -> SqlStateStore:
        return cls(await open_database(storage_url, ENGINE, migrations_for, data_dir))

    async def get(self, tenant_id: str, user_id: str) -> UserState | None:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                "SELECT state FROM user_states WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
        return decode_state(str(row[0])) if row else None

    async def save(
        self, tenant_id: str, user_id: str, state: UserState, expected_version: int
    ) -> bool:
        async with self._db.write(tenant_id, user_id) as tx:
            if expected_version == 0:
                changed = await tx.execute(
                    _UPSERT + "DO NOTHING", (tenant_id, user_id, state.version, encode_state(state))
                )
            else:
                changed = await tx.execute(
                    "UPDATE user_states SET version = ?, state = ? "
                    "WHERE tenant_id = ? AND user_id = ? AND version = ?",
                    (state.version, encode_state(state), tenant_id, user_id, expected_version),
                )
        return changed == 1

    async def replace(self, tenant_id: str, user_id: str, state: UserState) -> None:
        async with self._db.write(tenant_id, user_id) as tx:
            await tx.execute(
                _UPSERT + "DO UPDATE SET version = excluded.version, state = excluded.state",
                (tenant_id, user_id, state.version, encode_state(state)),
            )

    @property
    def database(self) -> Database:
        """The engine's database (its work orders and outbox live in it too)."""
        return self._db

    async def close(self) -> None:
        await self._db.close()
