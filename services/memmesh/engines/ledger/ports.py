"""The ledger's storage port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from memmesh.engines.ledger.domain.chain import AppendOutcome, NewEvent, StoredEvent


class LedgerStore(Protocol):
    """Append-only event streams keyed by (tenant, user)."""

    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[NewEvent]
    ) -> list[AppendOutcome]:
        """Append atomically; raise Conflict if a key is stored with other content."""
        ...

    def read(
        self, tenant_id: str, user_id: str, from_sequence: int, limit: int
    ) -> AsyncIterator[StoredEvent]:
        """Events from from_sequence on, in order; limit 0 means all."""
        ...

    async def close(self) -> None: ...
