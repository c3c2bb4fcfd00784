"""Fakes of the AtomExtractor's outbound ports and a scripted extractor, for unit tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import AtomRecord, ProvenanceEntry, TurnInput
from memmesh.engines.atom_extractor.outbox import effect_outbox
from memmesh.engines.atom_extractor.ports import Dependencies, TurnExtractor
from memmesh.engines.atom_extractor.use_cases import CapsuleService
from memmesh.extraction.model import ExtractionResult
from memmesh.ledger_event import NewEvent
from memmesh.outbox import Outbox, RetryPolicy


class Unreachable(Exception):
    """What a fake raises while it plays a dependency that is down."""


@dataclass
class FakeLedger:
    events: list[NewEvent] = field(default_factory=list)
    down: bool = False

    async def append(self, tenant_id: str, user_id: str, events: Sequence[NewEvent]) -> None:
        if self.down:
            raise Unreachable("ledger")
        known = {e.idempotency_key for e in self.events}
        self.events.extend(e for e in events if e.idempotency_key not in known)


@dataclass
class FakeIndex:
    documents: dict[str, AtomRecord] = field(default_factory=dict)
    down: bool = False

    async def upsert(self, tenant_id: str, user_id: str, atoms: Sequence[AtomRecord]) -> None:
        if self.down:
            raise Unreachable("index")
        self.documents.update({a.atom_id: a for a in atoms})

    async def remove(self, tenant_id: str, user_id: str, atom_ids: Sequence[str]) -> None:
        if self.down:
            raise Unreachable("index")
        for atom_id in atom_ids:
            self.documents.pop(atom_id, None)

    async def forget_user(self, tenant_id: str, user_id: str) -> None:
        if self.down:
            raise Unreachable("index")
        self.documents.clear()


@dataclass
class FakeGuard:
    rules: list[tuple[str, str, str]] = field(default_factory=list)
    forgotten_users: list[str] = field(default_factory=list)

    async def may_store(self, tenant_id: str, user_id: str, atom: AtomRecord) -> bool:
        for kind, target_type, target in self.rules:
            if kind != "DO_NOT_STORE":
                continue
            if target_type == "KEY" and (atom.key == target or atom.key.startswith(target + ".")):
                return False
            if target_type == "TOPIC" and target in atom.topics:
                return False
        return True

    async def set_rule(
        self, tenant_id: str, user_id: str, kind: str, target_type: str, target: str, now_us: int
    ) -> None:
        if (kind, target_type, target) not in self.rules:
            self.rules.append((kind, target_type, target))

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        self.rules.clear()
        self.forgotten_users.append(user_id)


@dataclass
class FakeState:
    applied: list[tuple[str, str]] = field(default_factory=list)

    async def apply_command(
        self,
        tenant_id: str,
        user_id: str,
        command: str,
        idempotency_key: str,
        now_us: int,
        resume_only: bool = False,
    ) -> None:
        if (command, idempotency_key) not in self.applied:
            self.applied.append((command, idempotency_key))


@dataclass
class FakeThreads:
    forgotten: list[str] = field(default_factory=list)
    restricted: dict[str, str] = field(default_factory=dict)
    redacted: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    forgotten_users: list[str] = field(default_factory=list)
    retention_modes: list[bool] = field(default_factory=list)

    async def set_retention_mode(
        self, tenant_id: str, user_id: str, remember_everything: bool, now_us: int
    ) -> None:
        self.retention_modes.append(remember_everything)

    async def redact_turns(
        self,
        tenant_id: str,
        user_id: str,
        turn_ids: Sequence[str],
        terms: Sequence[str],
        now_us: int,
    ) -> None:
        self.redacted.append((tuple(turn_ids), tuple(terms)))

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        self.forgotten_users.append(user_id)

    async def forget_thread(
        self, tenant_id: str, user_id: str, thread_id: str, now_us: int
    ) -> None:
        self.forgotten.append(thread_id)

    async def restrict_turns(
        self, tenant_id: str, user_id: str, turn_ids: Sequence[str], exposure: str
    ) -> None:
        strictness = ("SAFE_TO_SPEAK", "SAFE_TO_TEXT", "INTERNAL_ONLY")
        for turn_id in turn_ids:
            held = self.restricted.get(turn_id, "SAFE_TO_SPEAK")
            self.restricted[turn_id] = max(held, exposure, key=strictness.index)


@dataclass
class FakeDevices:
    forgotten: list[tuple[str, str]] = field(default_factory=list)
    forgotten_users: list[str] = field(default_factory=list)

    async def forget_items(
        self, tenant_id: str, user_id: str, item_kind: str, keys: Sequence[str], now_us: int
    ) -> None:
        self.forgotten.extend((item_kind, key) for key in keys)

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        self.forgotten_users.append(user_id)


@dataclass
class FakeKeys:
    shredded: list[str] = field(default_factory=list)

    async def shred(self, tenant_id: str, user_id: str, now_us: int) -> None:
        self.shredded.append(user_id)


@dataclass
class Fakes:
    ledger: FakeLedger = field(default_factory=FakeLedger)
    index: FakeIndex = field(default_factory=FakeIndex)
    guard: FakeGuard = field(default_factory=FakeGuard)
    state: FakeState = field(default_factory=FakeState)
    threads: FakeThreads = field(default_factory=FakeThreads)
    devices: FakeDevices = field(default_factory=FakeDevices)
    keys: FakeKeys = field(default_factory=FakeKeys)
    outbox: Outbox | None = None

    def dependencies(self) -> Dependencies:
        return Dependencies(
            self.ledger, self.index, self.guard, self.state, self.threads, self.devices, self.keys
        )

    def service(self, store: SqlCapsuleStore, extractor: TurnExtractor) -> CapsuleService:
        """The use cases over the store, with an outbox whose retries are due at once (no
        background drainer: `drain` plays its next pass)."""
        dependencies = self.dependencies()
        self.outbox = effect_outbox(
            store.database, store, dependencies, RetryPolicy(initial_backoff_s=0.0)
        )
        return CapsuleService(store, dependencies, extractor, self.outbox)

    async def drain(self) -> None:
        assert self.outbox is not None
        await self.outbox.run_once()


class ScriptedExtractor:
    """Returns the result scripted for a turn's text (the rules are tested on their own)."""

    def __init__(self, script: dict[str, ExtractionResult]) -> None:
        self.script = script
        self.caches_dropped = 0

    def forget_cached(self) -> None:
        self.caches_dropped += 1

    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        return self.script.get(turn.text, ExtractionResult(relevant=False)), None


class HeldExtractor(ScriptedExtractor):
    """Scripted, but the extraction of one text waits until `release` is set (a slow
    provider), after setting `entered`."""

    def __init__(self, script: dict[str, ExtractionResult], held_text: str) -> None:
        super().__init__(script)
        self.held_text = held_text
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        if turn.text == self.held_text:
            self.entered.set()
            await self.release.wait()
        return await super().extract(tenant_id, user_id, turn, now_us)
