"""The ledger's storage port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from memmesh.engines.ledger.domain.chain import (
    AppendOutcome,
    ExpectedHead,
    NewEvent,
    StoredEvent,
)
from memmesh.engines.ledger.domain.subject_keys import ShredOutcome, SubjectKey


class LedgerStore(Protocol):
    """Append-only event streams keyed by (tenant, user), and each user's subject key."""

    async def append(
        self,
        tenant_id: str,
        user_id: str,
        events: Sequence[NewEvent],
        subject_key_id: str = "",
        expected_head: ExpectedHead | None = None,
    ) -> list[AppendOutcome]:
        """Append atomically; raise Conflict if a key is stored with other content,
        PreconditionFailed if subject_key_id is given and is not the user's current key, and
        VersionMismatch if expected_head is given, the batch would write something and the
        user's last event of that type is elsewhere."""
        ...

    async def subject_key(self, tenant_id: str, user_id: str, now_us: int) -> SubjectKey:
        """The user's current subject key, made on first use."""
        ...

    async def shred_subject_key(self, tenant_id: str, user_id: str, now_us: int) -> ShredOutcome:
        """Destroy the user's key and record the fact on the chain."""
        ...

    def read(
        self, tenant_id: str, user_id: str, from_sequence: int, limit: int
    ) -> AsyncIterator[StoredEvent]:
        """Events from from_sequence on, in order; limit 0 means all."""
        ...

    async def close(self) -> None: ...
