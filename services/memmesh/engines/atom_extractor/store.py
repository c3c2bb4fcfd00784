"""The capsule's storage port and its adapters, chosen by configuration."""

from __future__ import annotations

from typing import Protocol

from memmesh.engines.atom_extractor.capsule import (
    AtomRecord,
    CapsuleCommit,
    CorrectionPair,
    Effect,
    ProvenanceEntry,
    RejectionEntry,
)
from memmesh.runtime.settings import MeshSettings


class CapsuleStore(Protocol):
    """Atoms, learning artifacts, logs and the effect outbox of each (tenant, user)."""

    async def load_atoms(self, tenant_id: str, user_id: str) -> list[AtomRecord]:
        """Every atom of the user, in key then id order."""
        ...

    async def list_atoms(
        self, tenant_id: str, user_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[AtomRecord]:
        """A page of atoms in key then id order, after the (key, id) given."""
        ...

    async def session_refs(self, tenant_id: str, user_id: str, session_id: str) -> tuple[str, ...]:
        """Ids of the atoms last referenced in the session."""
        ...

    async def is_processed(self, tenant_id: str, user_id: str, marker: str) -> bool: ...

    async def commit(self, tenant_id: str, user_id: str, commit: CapsuleCommit) -> bool:
        """Write everything atomically; False (nothing written) when the marker is stored already.
        Raise VersionMismatch when an atom moved on since it was loaded."""
        ...

    async def list_corrections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[CorrectionPair]:
        """Newest first."""
        ...

    async def list_rejections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[RejectionEntry]:
        """Newest first."""
        ...

    async def list_provenance(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[ProvenanceEntry]:
        """Newest first."""
        ...

    async def pending_effects(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[tuple[int, Effect]]:
        """Queued effects in the order they were queued."""
        ...

    async def complete_effects(
        self, tenant_id: str, user_id: str, sequences: list[int]
    ) -> None: ...

    async def count_pending(self, tenant_id: str, user_id: str) -> int: ...

    async def close(self) -> None: ...


async def open_capsule_store(settings: MeshSettings) -> CapsuleStore:
    """SQLite under data_dir by default, PostgreSQL for a postgresql:// URL."""
    match settings.storage_url:
        case "sqlite":
            from memmesh.engines.atom_extractor.sqlite_store import SqliteCapsuleStore

            return SqliteCapsuleStore.open(settings.sqlite_path("atom_extractor"))
        case url if url.startswith(("postgresql://", "postgres://")):
            from memmesh.engines.atom_extractor.postgres_store import PostgresCapsuleStore

            return await PostgresCapsuleStore.open(url)
        case other:
            raise ValueError(f"unsupported storage_url {other!r}")
