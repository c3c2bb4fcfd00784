"""The ledger's storage port and its adapters, chosen by configuration."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.ledger.chain import NewEvent, StoredEvent
from memmesh.runtime.settings import MeshSettings


@dataclass(frozen=True)
class AppendOutcome:
    """Where an event landed; duplicate when its idempotency key was already stored."""

    sequence: int
    hash: bytes
    duplicate: bool


class LedgerStore(Protocol):
    """Append-only event streams keyed by (tenant, user)."""

    async def append(self, tenant_id: str, user_id: str, events: Sequence[NewEvent]) -> list[AppendOutcome]:
        """Append atomically; raise Conflict if a key is stored with other content."""
        ...

    def read(self, tenant_id: str, user_id: str, from_sequence: int, limit: int) -> AsyncIterator[StoredEvent]:
        """Events from from_sequence on, in order; limit 0 means all."""
        ...

    async def close(self) -> None: ...


async def open_ledger_store(settings: MeshSettings) -> LedgerStore:
    """SQLite under data_dir by default, PostgreSQL for a postgresql:// URL."""
    match settings.storage_url:
        case "sqlite":
            from memmesh.engines.ledger.sqlite_store import SqliteLedgerStore

            return SqliteLedgerStore.open(settings.sqlite_path("ledger"))
        case url if url.startswith(("postgresql://", "postgres://")):
            from memmesh.engines.ledger.postgres_store import PostgresLedgerStore

            return await PostgresLedgerStore.open(url)
        case other:
            raise ValueError(f"unsupported storage_url {other!r}")
