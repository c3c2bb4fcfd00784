"""The gateway's durable retry queue of extractions, behind a small port.

The gateway holds no memory. This queue is not memory either: it holds a user turn
only until the AtomExtractor has processed it, so that Ingest can answer as soon as
the turn is archived even when extraction is down or slow, and no turn is lost when
the gateway restarts. A row is deleted the moment Process succeeds; Process is
idempotent by turn id, so a retry after a lost answer never applies anything twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from memmesh.runtime.settings import MeshSettings


@dataclass(frozen=True)
class PendingExtraction:
    """A user turn waiting for extraction."""

    tenant_id: str
    user_id: str
    turn_id: str
    session_id: str
    text: str
    time_us: int
    attempts: int = 0
    # Wall-clock microseconds of the next attempt (the queue outlives processes).
    next_attempt_us: int = 0


class PendingStore(Protocol):
    async def add(self, item: PendingExtraction) -> None:
        """Queue the turn; a turn already queued is left as it is."""
        ...

    async def remove(self, tenant_id: str, user_id: str, turn_id: str) -> None:
        """Drop the turn from the queue (extraction succeeded)."""
        ...

    async def is_pending(self, tenant_id: str, user_id: str, turn_id: str) -> bool: ...

    async def due(self, now_us: int, limit: int) -> list[PendingExtraction]:
        """Queued turns whose next attempt is due, oldest attempt time first."""
        ...

    async def reschedule(self, tenant_id: str, user_id: str, turn_id: str, attempts: int, next_attempt_us: int) -> None: ...

    async def count(self, tenant_id: str, user_id: str) -> int:
        """Turns of the user still waiting."""
        ...

    async def close(self) -> None: ...


async def open_pending_store(settings: MeshSettings) -> PendingStore:
    """SQLite under data_dir by default, PostgreSQL (schema gateway) for a postgresql:// URL."""
    match settings.storage_url:
        case "sqlite":
            from memmesh.engines.gateway.sqlite_store import SqlitePendingStore

            return SqlitePendingStore.open(settings.sqlite_path("gateway"))
        case url if url.startswith(("postgresql://", "postgres://")):
            from memmesh.engines.gateway.postgres_store import PostgresPendingStore

            return await PostgresPendingStore.open(url)
        case other:
            raise ValueError(f"unsupported storage_url {other!r}")
