"""Use cases of the ledger: append to a user's stream, read it, verify its chain; hand out
and destroy the user's subject key."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence

from memmesh.engines.ledger.domain.chain import (
    AppendOutcome,
    ChainWalker,
    ExpectedHead,
    NewEvent,
    StoredEvent,
    VerifyReport,
)
from memmesh.engines.ledger.domain.subject_keys import ShredOutcome, SubjectKey
from memmesh.engines.ledger.ports import LedgerStore


class LedgerUseCases:
    """Every call is scoped to one (tenant, user) stream."""

    def __init__(self, store: LedgerStore) -> None:
        self._store = store

    async def append(
        self,
        tenant_id: str,
        user_id: str,
        events: Sequence[NewEvent],
        subject_key_id: str = "",
        expected_head: ExpectedHead | None = None,
    ) -> list[AppendOutcome]:
        """Append the batch atomically; a stored key with the same content is a duplicate.
        With subject_key_id, the batch is refused unless that key is still the user's; with
        expected_head, a batch that would write anything is refused unless the user's last
        event of that type is at that sequence (duplicates are answered first, so a retry
        answers as the first call did)."""
        return await self._store.append(tenant_id, user_id, events, subject_key_id, expected_head)

    async def subject_key(self, tenant_id: str, user_id: str) -> SubjectKey:
        """The user's current subject key, made on first use."""
        return await self._store.subject_key(tenant_id, user_id, time.time_ns() // 1000)

    async def shred_subject_key(self, tenant_id: str, user_id: str, now_us: int) -> ShredOutcome:
        """Destroy the user's subject key (a second shred finds none and records nothing)."""
        return await self._store.shred_subject_key(tenant_id, user_id, now_us)

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
