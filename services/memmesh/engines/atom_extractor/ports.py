"""Outbound ports of the AtomExtractor: one small protocol per engine it calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.atom_extractor.capsule import AtomRecord


class PermanentFailure(Exception):
    """The dependency refused the request for good (bad input, conflict): retrying cannot help."""


class LedgerPort(Protocol):
    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[dict[str, object]]
    ) -> None:
        """Append events (idempotent by their keys)."""
        ...


class IndexPort(Protocol):
    async def upsert(self, tenant_id: str, user_id: str, atoms: Sequence[AtomRecord]) -> None: ...

    async def remove(self, tenant_id: str, user_id: str, atom_ids: Sequence[str]) -> None: ...


class GuardPort(Protocol):
    async def may_store(self, tenant_id: str, user_id: str, atom: AtomRecord) -> bool:
        """False when a do-not-store rule covers the atom's key or topics."""
        ...

    async def set_rule(
        self, tenant_id: str, user_id: str, kind: str, target_type: str, target: str, now_us: int
    ) -> None: ...


class StatePort(Protocol):
    async def apply_command(
        self, tenant_id: str, user_id: str, command: str, idempotency_key: str, now_us: int
    ) -> None:
        """Apply REMEMBER_EVERYTHING or RECALL_ONLY_IF_ASKED to the user's current state."""
        ...


class ThreadPort(Protocol):
    async def forget_thread(
        self, tenant_id: str, user_id: str, thread_id: str, now_us: int
    ) -> None: ...

    async def restrict_turns(
        self, tenant_id: str, user_id: str, turn_ids: Sequence[str], exposure: str
    ) -> None:
        """Make the archived turns at least this strict (an Exposure name); idempotent."""
        ...


@dataclass(frozen=True)
class Dependencies:
    """Every outbound port, injected by the composition root (fakes in unit tests)."""

    ledger: LedgerPort
    index: IndexPort
    guard: GuardPort
    state: StatePort
    threads: ThreadPort
