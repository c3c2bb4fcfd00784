"""The ThreadStore's one SQL store: sessions, archive, loops, digests, episodes and graph
in an SQLite file or a PostgreSQL schema, both named `thread_store`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memmesh.engines.thread_store.adapters.sql_tx import USER_TABLES, SqlUserTx
from memmesh.outbox import outbox_lock, outbox_migration, outbox_trace_migration
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect


def migrations(dialect: Dialect) -> tuple[Migration, ...]:
    """The schema steps, in the dialect's integer type."""
    big = dialect.big_int
    return (
        Migration(1, _tables(big)),
        Migration(2, _episode_tables(big)),
        # The exposure of each archived turn (1 SAFE_TO_SPEAK, 2 SAFE_TO_TEXT, 3 INTERNAL_ONLY).
        Migration(3, ("ALTER TABLE thread_turns ADD COLUMN exposure INTEGER NOT NULL DEFAULT 1",)),
        # What the retrieval index must still be told (queued with the writes that cause it).
        outbox_migration(dialect, 4),
        # The turn ids (never the text) of each forgotten session, so a repeated forget
        # answers the same ids; gone when the user is forgotten.
        Migration(
            5,
            (
                """CREATE TABLE thread_forgotten_sessions (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
                turn_ids TEXT NOT NULL, PRIMARY KEY (tenant_id, user_id, session_id))""",
            ),
        ),
        # The version of the user's last index change (a number only, kept when the user is
        # forgotten): the ranker never lets an older change overwrite a newer one.
        Migration(
            6,
            (
                f"""CREATE TABLE thread_index_versions (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, version {big} NOT NULL,
                PRIMARY KEY (tenant_id, user_id))""",
            ),
        ),
        # Tone signals (seed 001 §2.3): a label per turn that gave it, never the turn's words.
        Migration(
            7,
            (
                f"""CREATE TABLE thread_tone_signals (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
                session_id TEXT NOT NULL, signal TEXT NOT NULL, weight INTEGER NOT NULL,
                time_us {big} NOT NULL, PRIMARY KEY (tenant_id, user_id, turn_id, signal))""",
                "CREATE INDEX thread_tone_by_time ON thread_tone_signals (tenant_id, user_id, time_us)",
            ),
        ),
        outbox_trace_migration(),
        # Topic threads (seed 001 §2.18): each digested session belongs to one thread; a
        # thread keeps its pin and uses. Every stored digest founds a thread of its own.
        Migration(
            8,
            (
                "ALTER TABLE thread_digests ADD COLUMN last_decisions TEXT NOT NULL DEFAULT '[]'",
                f"""CREATE TABLE thread_topics (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, topic_id TEXT NOT NULL,
                pinned INTEGER NOT NULL, use_count INTEGER NOT NULL, last_use_us {big} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, topic_id))""",
                """CREATE TABLE thread_topic_members (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
                topic_id TEXT NOT NULL, PRIMARY KEY (tenant_id, user_id, session_id))""",
                "CREATE INDEX thread_topic_members_by_topic ON thread_topic_members "
                "(tenant_id, user_id, topic_id)",
                "INSERT INTO thread_topics (tenant_id, user_id, topic_id, pinned, use_count, "
                "last_use_us) SELECT tenant_id, user_id, thread_id, pinned, use_count, "
                "last_use_us FROM thread_digests",
                "INSERT INTO thread_topic_members (tenant_id, user_id, session_id, topic_id) "
                "SELECT tenant_id, user_id, thread_id, thread_id FROM thread_digests",
            ),
        ),
        # Typed graph links (seed 001 §2.19), each kept per session that stated it.
        Migration(
            9,
            (
                """CREATE TABLE graph_links (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL,
                from_node TEXT NOT NULL, to_node TEXT NOT NULL, edge_type TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, thread_id, from_node, to_node, edge_type))""",
                "CREATE INDEX graph_links_by_from ON graph_links (tenant_id, user_id, from_node)",
                "CREATE INDEX graph_links_by_to ON graph_links (tenant_id, user_id, to_node)",
            ),
        ),
        # The Observer's observations of each session and the Reflector's reflection of each
        # topic thread (seed 004), each with its provenance and the hash of what it was
        # made from.
        Migration(
            10,
            (
                """CREATE TABLE thread_observations (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
                source_hash TEXT NOT NULL, observations TEXT NOT NULL, provenance TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, session_id))""",
                """CREATE TABLE thread_reflections (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, topic_id TEXT NOT NULL,
                source_hash TEXT NOT NULL, summary TEXT NOT NULL, left_off TEXT NOT NULL,
                provenance TEXT NOT NULL, PRIMARY KEY (tenant_id, user_id, topic_id))""",
            ),
        ),
        # The users who asked to remember everything (seed 001 §2.22).
        Migration(
            11,
            (
                """CREATE TABLE thread_retention_modes (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                remember_everything INTEGER NOT NULL, PRIMARY KEY (tenant_id, user_id))""",
            ),
        ),
        # The version of each user's rows (a random number, gone with the user): every write
        # transaction of the user gives it a new one, so whatever a process keeps of what
        # the rows gave is keyed by it and never outlives a change, on any replica.
        Migration(
            12,
            (
                f"""CREATE TABLE thread_data_versions (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, version {big} NOT NULL,
                PRIMARY KEY (tenant_id, user_id))""",
            ),
        ),
    )


def _tables(big: str) -> tuple[str, ...]:
    """Tables and indexes; `big` is the 64-bit integer type of the dialect."""
    return (
        f"""CREATE TABLE thread_turns (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
            session_id TEXT NOT NULL, role INTEGER NOT NULL, text TEXT NOT NULL,
            time_us {big} NOT NULL, mode INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, user_id, turn_id))""",
        "CREATE INDEX thread_turns_by_session ON thread_turns (tenant_id, user_id, session_id, time_us, turn_id)",
        "CREATE INDEX thread_turns_by_time ON thread_turns (tenant_id, user_id, time_us, turn_id)",
        f"""CREATE TABLE thread_sessions (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            start_us {big} NOT NULL, last_us {big} NOT NULL, turn_count INTEGER NOT NULL,
            rolling_summary TEXT NOT NULL, closed INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, user_id, session_id))""",
        "CREATE INDEX thread_sessions_by_recency ON thread_sessions (tenant_id, user_id, last_us)",
        f"""CREATE TABLE thread_users (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, last_interaction_us {big} NOT NULL,
            last_session_id TEXT NOT NULL, PRIMARY KEY (tenant_id, user_id))""",
        f"""CREATE TABLE thread_loops (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, loop_id TEXT NOT NULL,
            thread_id TEXT NOT NULL, text TEXT NOT NULL, stems TEXT NOT NULL, salience INTEGER NOT NULL,
            open_us {big} NOT NULL, source_turn_id TEXT NOT NULL, closed_by_turn_id TEXT NOT NULL,
            PRIMARY KEY (tenant_id, user_id, loop_id))""",
        "CREATE INDEX thread_loops_open ON thread_loops (tenant_id, user_id, closed_by_turn_id, open_us)",
        f"""CREATE TABLE thread_digests (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL,
            title TEXT NOT NULL, summary TEXT NOT NULL, key_entities TEXT NOT NULL,
            unresolved_questions TEXT NOT NULL, next_step TEXT NOT NULL, evidence_turn_ids TEXT NOT NULL,
            update_us {big} NOT NULL, pinned INTEGER NOT NULL, use_count INTEGER NOT NULL,
            last_use_us {big} NOT NULL, has_open_loops INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, user_id, thread_id))""",
        """CREATE TABLE graph_nodes (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL,
            node_id TEXT NOT NULL, label TEXT NOT NULL,
            PRIMARY KEY (tenant_id, user_id, thread_id, node_id))""",
        "CREATE INDEX graph_nodes_by_id ON graph_nodes (tenant_id, user_id, node_id)",
        """CREATE TABLE graph_edges (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL,
            from_node TEXT NOT NULL, to_node TEXT NOT NULL, weight INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, user_id, thread_id, from_node, to_node))""",
        "CREATE INDEX graph_edges_by_from ON graph_edges (tenant_id, user_id, from_node)",
    )


def _episode_tables(big: str) -> tuple[str, ...]:
    """The episode table."""
    return (
        f"""CREATE TABLE thread_episodes (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, episode_id TEXT NOT NULL,
            thread_id TEXT NOT NULL, position INTEGER NOT NULL, title TEXT NOT NULL,
            summary TEXT NOT NULL, key_entities TEXT NOT NULL, evidence_turn_ids TEXT NOT NULL,
            update_us {big} NOT NULL,
            PRIMARY KEY (tenant_id, user_id, episode_id))""",
        "CREATE INDEX thread_episodes_by_thread ON thread_episodes (tenant_id, user_id, thread_id, position)",
    )


class SqlThreadStore:
    """The ThreadStore port over one Database: writers of one user serialise on the user
    (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL), so the session rule and
    loop changes see every earlier turn, across any number of processes. The lock is the
    user's outbox lock, so a write can queue its index effects in its own transaction.
    Every write transaction gives the user's rows a new data version."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def database(self) -> Database:
        """The database, shared with the outbox."""
        return self._db

    @asynccontextmanager
    async def write(self, tenant_id: str, user_id: str) -> AsyncIterator[SqlUserTx]:
        async with self._db.write(*outbox_lock(tenant_id, user_id)) as tx:
            user = SqlUserTx(tx, tenant_id, user_id)
            # Renewed by every write, whatever it changes: nothing kept at an older version
            # is served once this commits (a write that rolls back leaves it as it was).
            await user.renew_data_version()
            yield user

    @asynccontextmanager
    async def read(self, tenant_id: str, user_id: str) -> AsyncIterator[SqlUserTx]:
        async with self._db.read() as tx:
            yield SqlUserTx(tx, tenant_id, user_id)

    async def reclaim_erased(self) -> bool:
        return await self._db.reclaim_erased((*USER_TABLES, "outbox_effects", "outbox_dead"))

    async def close(self) -> None:
        await self._db.close()
