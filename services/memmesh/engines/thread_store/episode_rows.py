"""Episode digests in SQL, shared by the SQLite and PostgreSQL adapters ("?" placeholders)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memmesh.engines.thread_store.model import Episode


def episode_schema(big: str) -> tuple[str, ...]:
    """The episode table; `big` is the 64-bit integer type of the dialect."""
    return (
        f"""CREATE TABLE thread_episodes (
            tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, episode_id TEXT NOT NULL,
            thread_id TEXT NOT NULL, position INTEGER NOT NULL, title TEXT NOT NULL,
            summary TEXT NOT NULL, key_entities TEXT NOT NULL, evidence_turn_ids TEXT NOT NULL,
            update_us {big} NOT NULL,
            PRIMARY KEY (tenant_id, user_id, episode_id))""",
        "CREATE INDEX thread_episodes_by_thread ON thread_episodes (tenant_id, user_id, thread_id, position)",
    )


_USER = "tenant_id = ? AND user_id = ?"
_COLUMNS = "episode_id, thread_id, title, summary, key_entities, evidence_turn_ids, update_us"


def _episode(row: tuple[Any, ...]) -> Episode:
    return Episode(
        episode_id=row[0], thread_id=row[1], title=row[2], summary=row[3], key_entities=tuple(json.loads(row[4])),
        evidence_turn_ids=tuple(json.loads(row[5])), update_us=int(row[6]),
    )  # fmt: skip


class EpisodeRows:
    """The episode statements of a user's SQL transaction (mixed into SqlUserTx)."""

    _db: Any
    _who: tuple[str, str]

    async def replace_episodes(self, thread_id: str, episodes: Sequence[Episode]) -> None:
        await self._db.execute(f"DELETE FROM thread_episodes WHERE {_USER} AND thread_id = ?", (*self._who, thread_id))
        if episodes:
            await self._db.executemany(
                f"INSERT INTO thread_episodes (tenant_id, user_id, position, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (*self._who, position, e.episode_id, e.thread_id, e.title, e.summary,
                     json.dumps(list(e.key_entities)), json.dumps(list(e.evidence_turn_ids)), e.update_us)
                    for position, e in enumerate(episodes)
                ],
            )  # fmt: skip

    async def thread_episodes(self, thread_id: str) -> list[Episode]:
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM thread_episodes WHERE {_USER} AND thread_id = ? ORDER BY position",
            (*self._who, thread_id),
        )
        return [_episode(row) for row in rows]

    async def episodes(self) -> list[Episode]:
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM thread_episodes WHERE {_USER} ORDER BY update_us, episode_id", self._who
        )
        return [_episode(row) for row in rows]
