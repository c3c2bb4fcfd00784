"""Ports of the learning use cases: their store and the ledger their package events go to."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.atom_extractor.learning.global_signals import Released, Signal
from memmesh.engines.atom_extractor.learning.vocabulary_pack import PackVersion
from memmesh.ledger_event import Appended, NewEvent


@dataclass(frozen=True)
class SealedCapsule:
    """A capsule as stored: the wrapped data key, the version and the sealed profile."""

    wrapped_key: bytes
    version: int
    sealed: bytes


class LearningStore(Protocol):
    async def read_capsule(self, tenant_id: str, user_id: str) -> SealedCapsule | None: ...

    async def update_capsule(
        self,
        tenant_id: str,
        user_id: str,
        mutate: Callable[[SealedCapsule | None], SealedCapsule | None],
    ) -> None: ...

    async def shred(self, tenant_id: str, user_id: str, contributor: str) -> None: ...

    async def opted_in(self, tenant_id: str, user_id: str) -> bool: ...

    async def set_consent(
        self, tenant_id: str, user_id: str, opted_in: bool, contributor: str, now_us: int
    ) -> None: ...

    async def contribute(self, contributor: str, signals: list[Signal]) -> None: ...

    async def signal_counts(self, min_contributors: int) -> list[Released]: ...

    async def put_pack(
        self, tenant_id: str, body: bytes, sha256: str, added_by: str, reason: str, now_us: int
    ) -> tuple[int, bool]: ...

    async def pack_versions(self, tenant_id: str, limit: int) -> list[PackVersion]: ...

    async def package_version(
        self, tenant_id: str, user_id: str, package_id: str, content_sha256: str
    ) -> int: ...

    async def close(self) -> None: ...


class EventLedger(Protocol):
    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[NewEvent]
    ) -> list[Appended]: ...
