"""Current State's storage port and its adapters, chosen by configuration."""

from __future__ import annotations

from typing import Protocol

from memmesh.engines.current_state.state import UserState
from memmesh.runtime.settings import MeshSettings


class StateStore(Protocol):
    """The projection: one row per user."""

    async def get(self, tenant_id: str, user_id: str) -> UserState | None: ...

    async def save(self, tenant_id: str, user_id: str, state: UserState, expected_version: int) -> bool:
        """Compare-and-set on the stored version (0 = not stored yet); False when it moved."""
        ...

    async def replace(self, tenant_id: str, user_id: str, state: UserState) -> None:
        """Overwrite unconditionally (rebuild)."""
        ...

    async def close(self) -> None: ...


async def open_state_store(settings: MeshSettings) -> StateStore:
    """SQLite under data_dir by default, PostgreSQL for a postgresql:// URL."""
    match settings.storage_url:
        case "sqlite":
            from memmesh.engines.current_state.sqlite_store import SqliteStateStore

            return SqliteStateStore.open(settings.sqlite_path("current_state"))
        case url if url.startswith(("postgresql://", "postgres://")):
            from memmesh.engines.current_state.postgres_store import PostgresStateStore

            return await PostgresStateStore.open(url)
        case other:
            raise ValueError(f"unsupported storage_url {other!r}")
