"""Episode digests in the ThreadStore's SQL, the same text on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memmesh.engines.thread_store.domain.model import Episode
from memmesh.storage.sql import Row, SqlTx

_USER = "tenant_id = ? AND user_id = ?"
_COLUMNS = "episode_id, thread_id, title, summary, key_entities, evidence_turn_ids, update_us"


def _episode(row: Row) -> Episode:
    return Episode(
        episode_id=row[0], thread_id=row[1], title=row[2], summary=row[3], key_entities=tuple(json.loads(row[4])),
        evidence_turn_ids=tuple(json.loads(row[5])), update_us=int(row[6]),
    )  # fmt: skip


class EpisodeRows:
    """The episode statements of a user's SQL transaction (mixed into SqlUserTx)."""

    _db: SqlTx
    _who: tuple[str, str]

    async def replace_episodes(self, thread_id: str, episodes: Sequence[Episode]) -> None:
        await self._db.execute(
            f"DELETE FROM thread_episodes WHERE {_USER} AND thread_id = ?", (*self._who, thread_id)
        )
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
