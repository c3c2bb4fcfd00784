"""One user's transaction in the ThreadStore's SQL, the same text on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Sequence
from typing import Any

from memmesh.engines.thread_store.adapters.episode_rows import EpisodeRows
from memmesh.engines.thread_store.adapters.ranker_index import index_effects, scrub_index_effects
from memmesh.engines.thread_store.domain.graph import Link
from memmesh.engines.thread_store.domain.model import (
    Digest,
    DigestHead,
    Edge,
    GraphNode,
    Loop,
    Mode,
    Role,
    SessionObservations,
    SessionRow,
    ThreadReflection,
    Turn,
    UserActivity,
)
from memmesh.engines.thread_store.domain.tone import HeardSignal, ToneSignal
from memmesh.engines.thread_store.domain.topics import TopicRow
from memmesh.engines.thread_store.ports import IndexChange
from memmesh.observation import Observation, ObservationKind, Provenance
from memmesh.outbox import Effect, enqueue_in, wall_clock_us
from memmesh.policy.sensitivity import Exposure
from memmesh.storage.sql import Row, SqlTx, marks

_USER = "tenant_id = ? AND user_id = ?"
# Every table holding a user's archive or what was built from it (the outbox's aside).
USER_TABLES = (
    "thread_turns",
    "thread_sessions",
    "thread_users",
    "thread_loops",
    "thread_digests",
    "thread_episodes",
    "graph_nodes",
    "graph_edges",
    "graph_links",
    "thread_forgotten_sessions",
    "thread_tone_signals",
    "thread_topics",
    "thread_topic_members",
    "thread_observations",
    "thread_reflections",
    "thread_retention_modes",
    "thread_data_versions",
)
_TURN_COLUMNS = "turn_id, session_id, role, text, time_us, exposure"
_SESSION_COLUMNS = "session_id, start_us, last_us, turn_count, rolling_summary, closed"
_LOOP_COLUMNS = (
    "loop_id, thread_id, text, stems, salience, open_us, source_turn_id, closed_by_turn_id"
)
_DIGEST_COLUMNS = (
    "thread_id, title, summary, key_entities, unresolved_questions, next_step, evidence_turn_ids, "
    "update_us, pinned, use_count, last_use_us, has_open_loops, last_decisions"
)


def _observation(item: dict[str, Any]) -> Observation:
    return Observation(str(item["text"]), ObservationKind(item["kind"]), tuple(item["turn_ids"]))


def _turn(row: Row) -> Turn:
    return Turn(row[0], row[1], Role(row[2]), row[3], int(row[4]), Exposure(row[5]))


def _session(row: Row) -> SessionRow:
    return SessionRow(row[0], int(row[1]), int(row[2]), int(row[3]), row[4], bool(row[5]))


def _loop(row: Row) -> Loop:
    return Loop(
        row[0], row[1], row[2], tuple(row[3].split()), int(row[4]), int(row[5]), row[6], row[7]
    )


def _digest(row: Row) -> Digest:
    return Digest(
        thread_id=row[0], title=row[1], summary=row[2], key_entities=tuple(json.loads(row[3])),
        unresolved_questions=tuple(json.loads(row[4])), next_step=row[5],
        evidence_turn_ids=tuple(json.loads(row[6])), update_us=int(row[7]), pinned=bool(row[8]),
        use_count=int(row[9]), last_use_us=int(row[10]), has_open_loops=bool(row[11]),
        last_decisions=tuple(json.loads(row[12])),
    )  # fmt: skip


class SqlUserTx(EpisodeRows):
    """UserTx over one SqlTx; every statement is bound to the (tenant, user)."""

    def __init__(self, tx: SqlTx, tenant_id: str, user_id: str) -> None:
        self._db = tx
        self._who = (tenant_id, user_id)

    async def _next_index_version(self) -> int:
        # Under the user's write lock: each change gets a higher version than every earlier one.
        row = await self._db.fetchone(
            f"SELECT version FROM thread_index_versions WHERE {_USER}", self._who
        )
        version = (int(row[0]) if row else 0) + 1
        await self._db.execute(
            "INSERT INTO thread_index_versions (tenant_id, user_id, version) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = excluded.version",
            (*self._who, version),
        )
        return version

    async def data_version(self) -> int:
        row = await self._db.fetchone(
            f"SELECT version FROM thread_data_versions WHERE {_USER}", self._who
        )
        return int(row[0]) if row else 0

    async def renew_data_version(self) -> None:
        """Give the user's rows a new data version (SqlThreadStore.write does, in every write):
        a random 63-bit number, so a version once replaced does not come back (a chance of
        one in 2^63), even after the row went with the user or an older backup came back."""
        await self._db.execute(
            "INSERT INTO thread_data_versions (tenant_id, user_id, version) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = excluded.version",
            (*self._who, secrets.randbits(63) or 1),
        )

    async def queue_index(self, change: IndexChange, key: str = "") -> list[Effect]:
        version = await self._next_index_version()
        effects = index_effects(*self._who, change, key, version)
        await enqueue_in(self._db, *self._who, effects, wall_clock_us())
        if change.forget_user and effects:
            # Everything queued before the user's forgetting goes (its payloads may carry
            # what they said); the forgetting itself stays, with a higher sequence number
            # than any effect a drainer may still hold, so no number is reused.
            first = await self._db.fetchone(
                f"SELECT MIN(seq) FROM outbox_effects WHERE {_USER} AND idempotency_key = ?",
                (*self._who, effects[0].key),
            )
            if first is not None and first[0] is not None:
                await self._db.execute(
                    f"DELETE FROM outbox_effects WHERE {_USER} AND seq < ?",
                    (*self._who, int(first[0])),
                )
            await self._db.execute(f"DELETE FROM outbox_dead WHERE {_USER}", self._who)
        return effects

    async def scrub_queued_index(self, turn_ids: Sequence[str], thread_ids: Sequence[str]) -> int:
        return await scrub_index_effects(self._db, self._who, turn_ids, thread_ids)

    async def set_turn_texts(self, texts: Sequence[tuple[str, str]]) -> None:
        if texts:
            await self._db.executemany(
                f"UPDATE thread_turns SET text = ? WHERE {_USER} AND turn_id = ?",
                [(text, *self._who, turn_id) for turn_id, text in texts],
            )

    async def forgotten_session(self, session_id: str) -> list[str]:
        rows = await self._rows(
            f"SELECT turn_ids FROM thread_forgotten_sessions WHERE {_USER} AND session_id = ?",
            session_id,
        )
        return [str(turn_id) for turn_id in json.loads(rows[0][0])] if rows else []

    async def record_forgotten_session(self, session_id: str, turn_ids: Sequence[str]) -> None:
        await self._db.execute(
            "INSERT INTO thread_forgotten_sessions (tenant_id, user_id, session_id, turn_ids) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, session_id) "
            "DO UPDATE SET turn_ids = excluded.turn_ids",
            (*self._who, session_id, json.dumps(sorted(set(turn_ids)))),
        )

    async def session_ids(self) -> list[str]:
        rows = await self._rows(
            f"SELECT session_id FROM thread_sessions WHERE {_USER} UNION "
            f"SELECT DISTINCT session_id FROM thread_turns WHERE {_USER} ORDER BY 1",
            *self._who,
        )
        return [str(row[0]) for row in rows]

    async def forget_user(self) -> int:
        turns = await self._db.execute(f"DELETE FROM thread_turns WHERE {_USER}", self._who)
        for table in USER_TABLES:
            if table != "thread_turns":
                await self._db.execute(f"DELETE FROM {table} WHERE {_USER}", self._who)
        return turns

    async def _rows(self, sql: str, *params: Any) -> list[Row]:
        return await self._db.fetchall(sql, (*self._who, *params))

    async def turn_mode(self, turn_id: str) -> Mode | None:
        rows = await self._rows(
            f"SELECT mode FROM thread_turns WHERE {_USER} AND turn_id = ?", turn_id
        )
        return Mode(rows[0][0]) if rows else None

    async def user_activity(self) -> UserActivity | None:
        rows = await self._rows(
            f"SELECT last_interaction_us, last_session_id FROM thread_users WHERE {_USER}"
        )
        return UserActivity(int(rows[0][0]), rows[0][1]) if rows else None

    async def save_activity(self, activity: UserActivity) -> None:
        await self._db.execute(
            "INSERT INTO thread_users (tenant_id, user_id, last_interaction_us, last_session_id) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET last_interaction_us = excluded.last_interaction_us, "
            "last_session_id = excluded.last_session_id",
            (*self._who, activity.last_interaction_us, activity.last_session_id),
        )

    async def session(self, session_id: str) -> SessionRow | None:
        rows = await self._rows(
            f"SELECT {_SESSION_COLUMNS} FROM thread_sessions WHERE {_USER} AND session_id = ?",
            session_id,
        )
        return _session(rows[0]) if rows else None

    async def save_session(self, row: SessionRow) -> None:
        await self._db.execute(
            f"INSERT INTO thread_sessions (tenant_id, user_id, {_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id, session_id) DO UPDATE SET start_us = excluded.start_us, "
            "last_us = excluded.last_us, turn_count = excluded.turn_count, "
            "rolling_summary = excluded.rolling_summary, closed = excluded.closed",
            (
                *self._who,
                row.session_id,
                row.start_us,
                row.last_us,
                row.turn_count,
                row.rolling_summary,
                int(row.closed),
            ),
        )

    async def recent_sessions(self, limit: int) -> list[SessionRow]:
        rows = await self._rows(
            f"SELECT {_SESSION_COLUMNS} FROM thread_sessions WHERE {_USER} ORDER BY last_us DESC, session_id LIMIT ?",
            limit,
        )
        return [_session(row) for row in rows]

    async def insert_turn(self, turn: Turn, mode: Mode) -> None:
        await self._db.execute(
            f"INSERT INTO thread_turns (tenant_id, user_id, {_TURN_COLUMNS}, mode) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *self._who,
                turn.turn_id,
                turn.session_id,
                int(turn.role),
                turn.text,
                turn.time_us,
                int(turn.exposure),
                int(mode),
            ),
        )

    async def session_turns(
        self,
        session_id: str,
        limit: int,
        user_only: bool = False,
        max_exposure: Exposure = Exposure.INTERNAL_ONLY,
    ) -> list[Turn]:
        role_filter = f" AND role = {int(Role.USER)}" if user_only else ""
        exposure_filter = (
            f" AND exposure <= {int(max_exposure)}" if max_exposure < Exposure.INTERNAL_ONLY else ""
        )
        rows = await self._rows(
            f"SELECT {_TURN_COLUMNS} FROM thread_turns WHERE {_USER} AND session_id = ?{role_filter}{exposure_filter} "
            "ORDER BY time_us DESC, turn_id DESC LIMIT ?",
            session_id,
            limit,
        )
        return [_turn(row) for row in reversed(rows)]

    async def turns_of(self, turn_ids: Sequence[str]) -> list[Turn]:
        if not turn_ids:
            return []
        rows = await self._rows(
            f"SELECT {_TURN_COLUMNS} FROM thread_turns WHERE {_USER} AND turn_id IN ({marks(len(turn_ids))}) "
            "ORDER BY time_us, turn_id",
            *turn_ids,
        )
        return [_turn(row) for row in rows]

    async def restrict_turns(self, turn_ids: Sequence[str], exposure: Exposure) -> int:
        if not turn_ids:
            return 0
        return await self._db.execute(
            f"UPDATE thread_turns SET exposure = ? WHERE {_USER} AND exposure < ? "
            f"AND turn_id IN ({marks(len(turn_ids))})",
            (int(exposure), *self._who, int(exposure), *turn_ids),
        )

    async def delete_loops_from(self, turn_ids: Sequence[str]) -> None:
        if turn_ids:
            await self._db.execute(
                f"DELETE FROM thread_loops WHERE {_USER} AND source_turn_id IN ({marks(len(turn_ids))})",
                (*self._who, *turn_ids),
            )

    async def add_tone_signals(
        self, turn: Turn, signals: Sequence[tuple[ToneSignal, int]], keep: int
    ) -> None:
        for signal, weight in signals:
            await self._db.execute(
                "INSERT INTO thread_tone_signals (tenant_id, user_id, turn_id, session_id, signal, "
                "weight, time_us) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (*self._who, turn.turn_id, turn.session_id, signal.value, weight, turn.time_us),
            )
        if signals:
            # Only the newest `keep` are kept: older ones have decayed to nothing.
            await self._db.execute(
                f"DELETE FROM thread_tone_signals WHERE {_USER} AND time_us < ("
                f"SELECT MIN(time_us) FROM (SELECT time_us FROM thread_tone_signals WHERE {_USER} "
                "ORDER BY time_us DESC LIMIT ?) AS newest)",
                (*self._who, *self._who, keep),
            )

    async def tone_signals(self, limit: int) -> list[HeardSignal]:
        rows = await self._rows(
            f"SELECT signal, weight, time_us, turn_id FROM thread_tone_signals WHERE {_USER} "
            "ORDER BY time_us DESC, turn_id, signal LIMIT ?",
            limit,
        )
        return [HeardSignal(ToneSignal(str(r[0])), int(r[1]), int(r[2]), str(r[3])) for r in rows]

    async def drop_tone_signals(self, turn_ids: Sequence[str] | None = None) -> int:
        if turn_ids is None:
            return await self._db.execute(
                f"DELETE FROM thread_tone_signals WHERE {_USER}", self._who
            )
        if not turn_ids:
            return 0
        return await self._db.execute(
            f"DELETE FROM thread_tone_signals WHERE {_USER} AND turn_id IN ({marks(len(turn_ids))})",
            (*self._who, *turn_ids),
        )

    async def clear_graph(self, thread_id: str) -> None:
        for table in ("graph_nodes", "graph_edges", "graph_links"):
            await self._db.execute(
                f"DELETE FROM {table} WHERE {_USER} AND thread_id = ?", (*self._who, thread_id)
            )

    async def open_loops(self, limit: int) -> list[Loop]:
        rows = await self._rows(
            f"SELECT {_LOOP_COLUMNS} FROM thread_loops WHERE {_USER} AND closed_by_turn_id = '' "
            "ORDER BY open_us DESC, loop_id LIMIT ?",
            limit,
        )
        return [_loop(row) for row in rows]

    async def thread_loops(self, thread_id: str) -> list[Loop]:
        rows = await self._rows(
            f"SELECT {_LOOP_COLUMNS} FROM thread_loops WHERE {_USER} AND thread_id = ? ORDER BY open_us, loop_id",
            thread_id,
        )
        return [_loop(row) for row in rows]

    async def save_loops(self, loops: Sequence[Loop]) -> None:
        if not loops:
            return
        await self._db.executemany(
            f"INSERT INTO thread_loops (tenant_id, user_id, {_LOOP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id, loop_id) DO UPDATE SET closed_by_turn_id = excluded.closed_by_turn_id",
            [
                (*self._who, x.loop_id, x.thread_id, x.text, " ".join(x.stems), x.salience, x.open_us,
                 x.source_turn_id, x.closed_by_turn_id)
                for x in loops
            ],
        )  # fmt: skip

    async def _add_nodes(self, thread_id: str, nodes: Sequence[GraphNode]) -> None:
        if nodes:
            await self._db.executemany(
                "INSERT INTO graph_nodes (tenant_id, user_id, thread_id, node_id, label) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant_id, user_id, thread_id, node_id) DO NOTHING",
                [(*self._who, thread_id, node.node_id, node.label) for node in nodes],
            )

    async def add_graph(
        self, thread_id: str, nodes: Sequence[GraphNode], pairs: Sequence[tuple[str, str]]
    ) -> None:
        await self._add_nodes(thread_id, nodes)
        if pairs:
            await self._db.executemany(
                "INSERT INTO graph_edges (tenant_id, user_id, thread_id, from_node, to_node, weight) "
                "VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (tenant_id, user_id, thread_id, from_node, to_node) "
                "DO UPDATE SET weight = graph_edges.weight + 1",
                [(*self._who, thread_id, a, b) for a, b in pairs],
            )

    async def add_links(
        self, thread_id: str, nodes: Sequence[GraphNode], links: Sequence[Link]
    ) -> None:
        await self._add_nodes(thread_id, nodes)
        if links:
            await self._db.executemany(
                "INSERT INTO graph_links (tenant_id, user_id, thread_id, from_node, to_node, edge_type) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(*self._who, thread_id, x.from_node_id, x.to_node_id, x.edge_type) for x in links],
            )

    async def neighbours(self, node_ids: Sequence[str], typed: bool = True) -> list[Edge]:
        if not node_ids:
            return []
        ids = marks(len(node_ids))
        rows = await self._rows(
            f"SELECT from_node, to_node, SUM(weight) FROM graph_edges WHERE {_USER} "
            f"AND from_node IN ({ids}) GROUP BY from_node, to_node",
            *node_ids,
        )
        edges = [Edge(row[0], row[1], int(row[2])) for row in rows]
        if typed:
            # A link counts once per session that stated it, and is walked from either end.
            rows = await self._rows(
                f"SELECT from_node, to_node, edge_type, COUNT(*) FROM graph_links WHERE {_USER} "
                f"AND (from_node IN ({ids}) OR to_node IN ({ids})) "
                "GROUP BY from_node, to_node, edge_type",
                *node_ids,
                *node_ids,
            )
            edges += [Edge(row[0], row[1], int(row[3]), str(row[2]), linked=True) for row in rows]
        return edges

    async def node_labels(self, node_ids: Sequence[str]) -> dict[str, str]:
        if not node_ids:
            return {}
        rows = await self._rows(
            f"SELECT node_id, MIN(label) FROM graph_nodes WHERE {_USER} "
            f"AND node_id IN ({marks(len(node_ids))}) GROUP BY node_id",
            *node_ids,
        )
        return {row[0]: row[1] for row in rows}

    async def digest(self, thread_id: str) -> Digest | None:
        rows = await self._rows(
            f"SELECT {_DIGEST_COLUMNS} FROM thread_digests WHERE {_USER} AND thread_id = ?",
            thread_id,
        )
        return _digest(rows[0]) if rows else None

    async def digests(self) -> list[Digest]:
        rows = await self._rows(
            f"SELECT {_DIGEST_COLUMNS} FROM thread_digests WHERE {_USER} ORDER BY update_us, thread_id"
        )
        return [_digest(row) for row in rows]

    async def digest_heads(self) -> list[DigestHead]:
        # Resume orders every digest on these few columns; only the chosen ones are read whole.
        rows = await self._rows(
            "SELECT thread_id, update_us, pinned, use_count, last_use_us, "
            f"CASE WHEN unresolved_questions <> '[]' OR has_open_loops <> 0 THEN 1 ELSE 0 END "
            f"FROM thread_digests WHERE {_USER} ORDER BY update_us, thread_id"
        )
        return [
            DigestHead(row[0], int(row[1]), bool(row[2]), int(row[3]), int(row[4]), bool(row[5]))
            for row in rows
        ]

    async def digests_of(self, thread_ids: Sequence[str]) -> dict[str, Digest]:
        if not thread_ids:
            return {}
        rows = await self._rows(
            f"SELECT {_DIGEST_COLUMNS} FROM thread_digests WHERE {_USER} AND thread_id IN ({marks(len(thread_ids))})",
            *thread_ids,
        )
        return {digest.thread_id: digest for digest in map(_digest, rows)}

    async def save_digest(self, digest: Digest) -> None:
        d = digest
        await self._db.execute(
            f"INSERT INTO thread_digests (tenant_id, user_id, {_DIGEST_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id, thread_id) DO UPDATE SET title = excluded.title, "
            "summary = excluded.summary, key_entities = excluded.key_entities, "
            "unresolved_questions = excluded.unresolved_questions, next_step = excluded.next_step, "
            "evidence_turn_ids = excluded.evidence_turn_ids, update_us = excluded.update_us, "
            "has_open_loops = excluded.has_open_loops, last_decisions = excluded.last_decisions",
            (*self._who, d.thread_id, d.title, d.summary, json.dumps(list(d.key_entities)),
             json.dumps(list(d.unresolved_questions)), d.next_step, json.dumps(list(d.evidence_turn_ids)),
             d.update_us, int(d.pinned), d.use_count, d.last_use_us, int(d.has_open_loops),
             json.dumps(list(d.last_decisions))),
        )  # fmt: skip

    async def topic_members(self) -> dict[str, str]:
        rows = await self._rows(
            f"SELECT session_id, topic_id FROM thread_topic_members WHERE {_USER}"
        )
        return {str(row[0]): str(row[1]) for row in rows}

    async def topic_rows(self) -> dict[str, TopicRow]:
        rows = await self._rows(
            f"SELECT topic_id, pinned, use_count, last_use_us FROM thread_topics WHERE {_USER}"
        )
        return {
            str(row[0]): TopicRow(str(row[0]), bool(row[1]), int(row[2]), int(row[3]))
            for row in rows
        }

    async def join_topic(self, session_id: str, topic_id: str) -> None:
        await self._db.execute(
            "INSERT INTO thread_topics (tenant_id, user_id, topic_id, pinned, use_count, "
            "last_use_us) VALUES (?, ?, ?, 0, 0, 0) ON CONFLICT DO NOTHING",
            (*self._who, topic_id),
        )
        await self._db.execute(
            "INSERT INTO thread_topic_members (tenant_id, user_id, session_id, topic_id) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, session_id) "
            "DO UPDATE SET topic_id = excluded.topic_id",
            (*self._who, session_id, topic_id),
        )
        # A thread that gains a session is reflected again.
        await self._db.execute(
            f"DELETE FROM thread_reflections WHERE {_USER} AND topic_id = ?",
            (*self._who, topic_id),
        )

    async def mark_topic(self, topic_id: str, pinned: bool | None, used_at_us: int | None) -> None:
        await self._db.execute(
            "INSERT INTO thread_topics (tenant_id, user_id, topic_id, pinned, use_count, "
            "last_use_us) VALUES (?, ?, ?, 0, 0, 0) ON CONFLICT DO NOTHING",
            (*self._who, topic_id),
        )
        if pinned is not None:
            await self._db.execute(
                f"UPDATE thread_topics SET pinned = ? WHERE {_USER} AND topic_id = ?",
                (int(pinned), *self._who, topic_id),
            )
        if used_at_us is not None:
            await self._db.execute(
                "UPDATE thread_topics SET use_count = use_count + 1, "
                f"last_use_us = CASE WHEN last_use_us > ? THEN last_use_us ELSE ? END WHERE {_USER} AND topic_id = ?",
                (used_at_us, used_at_us, *self._who, topic_id),
            )

    async def save_observations(self, observed: SessionObservations) -> None:
        await self._db.execute(
            "INSERT INTO thread_observations (tenant_id, user_id, session_id, source_hash, "
            "observations, provenance) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id, session_id) DO UPDATE SET "
            "source_hash = excluded.source_hash, observations = excluded.observations, "
            "provenance = excluded.provenance",
            (
                *self._who,
                observed.session_id,
                observed.source_hash,
                json.dumps([dataclasses.asdict(o) for o in observed.observations]),
                json.dumps([dataclasses.asdict(p) for p in observed.provenance]),
            ),
        )

    async def observations_of(self, session_ids: Sequence[str]) -> dict[str, SessionObservations]:
        if not session_ids:
            return {}
        rows = await self._rows(
            "SELECT session_id, source_hash, observations, provenance FROM thread_observations "
            f"WHERE {_USER} AND session_id IN ({marks(len(session_ids))})",
            *session_ids,
        )
        return {
            str(row[0]): SessionObservations(
                str(row[0]),
                str(row[1]),
                tuple(_observation(item) for item in json.loads(row[2])),
                tuple(Provenance(**item) for item in json.loads(row[3])),
            )
            for row in rows
        }

    async def save_reflection(self, reflection: ThreadReflection) -> None:
        r = reflection
        await self._db.execute(
            "INSERT INTO thread_reflections (tenant_id, user_id, topic_id, source_hash, summary, "
            "left_off, provenance) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id, topic_id) DO UPDATE SET "
            "source_hash = excluded.source_hash, summary = excluded.summary, "
            "left_off = excluded.left_off, provenance = excluded.provenance",
            (*self._who, r.topic_id, r.source_hash, r.summary, json.dumps(list(r.left_off)),
             json.dumps(dataclasses.asdict(r.provenance))),
        )  # fmt: skip

    async def reflections_of(self, topic_ids: Sequence[str]) -> dict[str, ThreadReflection]:
        if not topic_ids:
            return {}
        rows = await self._rows(
            "SELECT topic_id, source_hash, summary, left_off, provenance FROM thread_reflections "
            f"WHERE {_USER} AND topic_id IN ({marks(len(topic_ids))})",
            *topic_ids,
        )
        return {
            str(row[0]): ThreadReflection(
                str(row[0]),
                str(row[1]),
                str(row[2]),
                tuple(json.loads(row[3])),
                Provenance(**json.loads(row[4])),
            )
            for row in rows
        }

    async def drop_observed(self, session_id: str) -> None:
        # The reflection of the session's thread was made from what the session said too.
        await self._db.execute(
            f"DELETE FROM thread_reflections WHERE {_USER} AND topic_id IN (SELECT topic_id "
            f"FROM thread_topic_members WHERE {_USER} AND session_id = ?)",
            (*self._who, *self._who, session_id),
        )
        await self._db.execute(
            f"DELETE FROM thread_observations WHERE {_USER} AND session_id = ?",
            (*self._who, session_id),
        )

    async def remembers_everything(self) -> bool:
        rows = await self._rows(
            f"SELECT remember_everything FROM thread_retention_modes WHERE {_USER}"
        )
        return bool(rows and rows[0][0])

    async def set_remembers_everything(self, remember_everything: bool) -> None:
        await self._db.execute(
            "INSERT INTO thread_retention_modes (tenant_id, user_id, remember_everything) "
            "VALUES (?, ?, ?) ON CONFLICT (tenant_id, user_id) "
            "DO UPDATE SET remember_everything = excluded.remember_everything",
            (*self._who, int(remember_everything)),
        )

    async def expire_thread(self, topic_id: str, session_ids: Sequence[str]) -> None:
        for session_id in session_ids:
            for table in ("thread_digests", "thread_episodes", "graph_links"):
                await self._db.execute(
                    f"DELETE FROM {table} WHERE {_USER} AND thread_id = ?",
                    (*self._who, session_id),
                )
            for table in ("thread_observations", "thread_topic_members"):
                await self._db.execute(
                    f"DELETE FROM {table} WHERE {_USER} AND session_id = ?",
                    (*self._who, session_id),
                )
        for table in ("thread_reflections", "thread_topics"):
            await self._db.execute(
                f"DELETE FROM {table} WHERE {_USER} AND topic_id = ?", (*self._who, topic_id)
            )

    async def forget_thread(self, thread_id: str) -> bool:
        await self.drop_observed(thread_id)
        changed = 0
        for table, column in (
            ("thread_topic_members", "session_id"),
            ("thread_digests", "thread_id"),
            ("thread_episodes", "thread_id"),
            ("thread_loops", "thread_id"),
            ("graph_nodes", "thread_id"),
            ("graph_edges", "thread_id"),
            ("graph_links", "thread_id"),
            ("thread_sessions", "session_id"),
            ("thread_tone_signals", "session_id"),
            ("thread_turns", "session_id"),
        ):
            changed += await self._db.execute(
                f"DELETE FROM {table} WHERE {_USER} AND {column} = ?", (*self._who, thread_id)
            )
        # A thread none of whose sessions is left goes with its pin and uses.
        await self._db.execute(
            f"DELETE FROM thread_topics WHERE {_USER} AND NOT EXISTS (SELECT 1 FROM "
            "thread_topic_members m WHERE m.tenant_id = thread_topics.tenant_id AND "
            "m.user_id = thread_topics.user_id AND m.topic_id = thread_topics.topic_id)",
            self._who,
        )
        return changed > 0
