"""Outbound ports of the AtomExtractor: its capsule store, its turn extractor and one small protocol per
engine it calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    CapsuleCommit,
    CorrectionPair,
    LateErasures,
    ProvenanceEntry,
    RejectionEntry,
    TurnInput,
)
from memmesh.extraction.model import ExtractionResult
from memmesh.extraction.patterns import Observation
from memmesh.ledger_event import NewEvent
from memmesh.outbox import Delivery
from memmesh.outbox import Effect as QueuedForm


class AtomReader(Protocol):
    async def atoms_by_id(
        self, tenant_id: str, user_id: str, atom_ids: Sequence[str]
    ) -> list[AtomRecord]:
        """The atoms of those ids that exist, in key then id order."""
        ...


class EffectOutbox(Protocol):
    """The part of `memmesh.outbox.Outbox` the use cases call."""

    async def enqueue_and_deliver(
        self, tenant_id: str, user_id: str, effects: Sequence[QueuedForm], timeout_s: float
    ) -> Delivery: ...

    async def count_pending(self, tenant_id: str, user_id: str, kind: str | None = None) -> int: ...

    async def tally(self, tenant_id: str, user_id: str) -> list[tuple[str, str, int]]: ...


class CapsuleStore(AtomReader, Protocol):
    """Atoms, learning artifacts and logs of each (tenant, user); a commit also queues its
    effects in the engine's outbox, in the same transaction."""

    async def load_atoms(self, tenant_id: str, user_id: str) -> list[AtomRecord]:
        """Every atom of the user, in key then id order."""
        ...

    async def load_related(
        self,
        tenant_id: str,
        user_id: str,
        keys: Sequence[str],
        atom_ids: Sequence[str],
        topics: Sequence[str],
    ) -> list[AtomRecord]:
        """The atoms of those keys or ids or with one of those topics, and their conflict
        partners, in key then id order (a request's working set, by indexed reads)."""
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

    async def session_turns(self, tenant_id: str, user_id: str, session_id: str) -> list[str]:
        """Ids of the turns of the session the extractor processed, sorted."""
        ...

    async def reclaim_erased(self) -> None:
        """After a forget, start making the deleted bytes unreadable where the store can (best
        effort, in the background: the caller does not wait for it)."""
        ...

    async def user_turns(self, tenant_id: str, user_id: str) -> list[str]:
        """Ids of every turn of the user the extractor processed (in a session), sorted."""
        ...

    async def last_said(self, tenant_id: str, user_id: str, session_id: str) -> str:
        """The last turn said (no command) processed in the session; "" for none."""
        ...

    async def late_erasures(
        self, tenant_id: str, user_id: str, turn_id: str, session_id: str
    ) -> LateErasures:
        """The forgets a turn being extracted now must obey."""
        ...

    async def commit(self, tenant_id: str, user_id: str, commit: CapsuleCommit) -> bool:
        """Write everything atomically; False (nothing written) when the marker is stored already.
        Raise VersionMismatch when an atom moved on since it was loaded."""
        ...

    async def observations(self, tenant_id: str, user_id: str) -> list[Observation]:
        """The user's behaviour observations (the pattern learner's), oldest first."""
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

    async def close(self) -> None: ...


class TurnExtractor(Protocol):
    """How a turn becomes an extraction result: the rules, or the semantic path with fallback."""

    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        """The extraction and, for the semantic path, its provenance record."""
        ...

    def forget_cached(self) -> None:
        """Drop what the extractor keeps of texts it saw (an encoder's vectors): an erasure
        leaves nothing derived from forgotten words in memory."""
        ...


class LedgerPort(Protocol):
    async def append(self, tenant_id: str, user_id: str, events: Sequence[NewEvent]) -> object:
        """Append events (idempotent by their keys)."""
        ...


class IndexPort(Protocol):
    async def upsert(self, tenant_id: str, user_id: str, atoms: Sequence[AtomRecord]) -> None: ...

    async def remove(self, tenant_id: str, user_id: str, atom_ids: Sequence[str]) -> None: ...

    async def forget_user(self, tenant_id: str, user_id: str) -> None:
        """Remove every document of the user from the index."""
        ...


class GuardPort(Protocol):
    async def may_store(self, tenant_id: str, user_id: str, atom: AtomRecord) -> bool:
        """False when a do-not-store rule covers the atom's key or topics."""
        ...

    async def set_rule(
        self, tenant_id: str, user_id: str, kind: str, target_type: str, target: str, now_us: int
    ) -> None: ...

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        """Forget every exposure rule of the user, with its subject terms (idempotent)."""
        ...


class StatePort(Protocol):
    async def apply_command(
        self,
        tenant_id: str,
        user_id: str,
        command: str,
        idempotency_key: str,
        now_us: int,
        resume_only: bool = False,
    ) -> None:
        """Apply REMEMBER_EVERYTHING or RECALL_ONLY_IF_ASKED to the user's current state
        (`resume_only`: RECALL_ONLY_IF_ASKED said of resuming turns auto-resume off only)."""
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

    async def redact_turns(
        self,
        tenant_id: str,
        user_id: str,
        turn_ids: Sequence[str],
        terms: Sequence[str],
        now_us: int,
    ) -> None:
        """Cut every sentence holding a term from the turns (no terms: their whole text)."""
        ...

    async def forget_tone(self, tenant_id: str, user_id: str, now_us: int) -> None:
        """Forget the user's learned tone (idempotent)."""
        ...

    async def set_retention_mode(
        self, tenant_id: str, user_id: str, remember_everything: bool, now_us: int
    ) -> None:
        """Tell the archive the user's retention mode (idempotent)."""
        ...

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        """Forget everything the archive holds of the user."""
        ...


class KeyShredderPort(Protocol):
    async def shred(self, tenant_id: str, user_id: str, now_us: int) -> None:
        """Destroy the user's Ledger subject key (idempotent)."""
        ...


class DevicePort(Protocol):
    async def forget_items(
        self, tenant_id: str, user_id: str, item_kind: str, keys: Sequence[str], now_us: int
    ) -> None:
        """Devices' copies of these artifacts become deletions (tombstones)."""
        ...

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        """Every device copy of the user becomes a deletion."""
        ...


@dataclass(frozen=True)
class Dependencies:
    """Every outbound port, injected by the composition root (fakes in unit tests)."""

    ledger: LedgerPort
    index: IndexPort
    guard: GuardPort
    state: StatePort
    threads: ThreadPort
    # None when the mesh has no OutboxSync: a forget then reaches no device.
    devices: DevicePort | None
    keys: KeyShredderPort
