"""Use cases of the ledger: append to a user's stream, read it, verify its chain."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from memmesh.engines.ledger.domain.chain import (
    AppendOutcome,
    ChainWalker,
    NewEvent,
    StoredEvent,
    VerifyReport,
)
from memmesh.engines.ledger.ports import LedgerStore


class LedgerUseCases:
    """Every call is scoped to one (tenant, user) stream."""

    def __init__(self, store: LedgerStore) -> None:
        self._store = store

    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[NewEvent]
    ) -> list[AppendOutcome]:
        """Append the batch atomically; a stored key with the same content is a duplicate."""
        return await self._store.append(tenant_id, user_id, events)

    def read(
        self, tenant_id: str, user_id: str, from_sequence: int, limit: int
    ) -> AsyncIterator[StoredEvent]:
        """The stream's events from from_sequence on; limit 0 means all."""
        return self._store.read(tenant_id, user_id, from_sequence, limit)

    async def verify(self, tenant_id: str, user_id: str) -> VerifyReport:
        """Walk the whole stream, one page at a time, up to the first broken link."""
        walker = ChainWalker(tenant_id, user_id)
        async for stored in self._store.read(tenant_id, user_id, 1, 0):
            if not walker.feed(stored):
                break
        return walker.report()
