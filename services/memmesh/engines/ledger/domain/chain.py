"""The ledger's domain: events, their canonical encoding and the SHA-256 hash chain."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from memmesh.errors import Conflict

GENESIS_HASH = bytes(32)

AttributeValue = str | int | bool


@dataclass(frozen=True)
class Attribute:
    """A typed attribute: kind is 's' (string), 'i' (integer), 'b' (flag) or 't' (time, µs)."""

    name: str
    kind: str
    value: AttributeValue


@dataclass(frozen=True)
class NewEvent:
    """An event as a caller asks to append it."""

    idempotency_key: str
    event_type: str
    reason_code: str
    attributes: tuple[Attribute, ...]
    occur_time_us: int

    def content_hash(self) -> bytes:
        """Hash of what the caller said; an idempotency key may only ever mean this."""
        return hashlib.sha256(_canonical({"content": _content(self)})).digest()


@dataclass(frozen=True)
class ExpectedHead:
    """The condition of a conditional append: the user's last event of `event_type` is at
    `sequence` (0: the stream holds none of that type)."""

    event_type: str
    sequence: int


@dataclass(frozen=True)
class StoredEvent:
    """An event in a stream, sealed into the chain."""

    sequence: int
    event: NewEvent
    previous_hash: bytes
    hash: bytes


@dataclass(frozen=True)
class VerifyReport:
    """Outcome of walking a stream."""

    intact: bool
    event_count: int
    first_broken_sequence: int
    head_hash: bytes


def _content(event: NewEvent) -> dict[str, object]:
    return {
        "key": event.idempotency_key,
        "type": event.event_type,
        "reason": event.reason_code,
        "attrs": [
            [a.name, a.kind, a.value] for a in sorted(event.attributes, key=lambda a: a.name)
        ],
        "at": event.occur_time_us,
    }


def _canonical(value: dict[str, object]) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def seal(
    tenant_id: str, user_id: str, sequence: int, event: NewEvent, previous_hash: bytes
) -> bytes:
    """SHA-256 over the canonical bytes of the event, its place in the stream and the previous hash."""
    body = {
        "v": 1,
        "tenant": tenant_id,
        "user": user_id,
        "seq": sequence,
        "content": _content(event),
        "prev": previous_hash.hex(),
    }
    return hashlib.sha256(_canonical(body)).digest()


def encode_attributes(attributes: Iterable[Attribute]) -> str:
    """Attributes as stored: canonical JSON, sorted by name."""
    return json.dumps(
        [[a.name, a.kind, a.value] for a in sorted(attributes, key=lambda a: a.name)],
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode_attributes(stored: str) -> tuple[Attribute, ...]:
    """Attributes from their stored form."""
    return tuple(Attribute(name, kind, value) for name, kind, value in json.loads(stored))


class ChainWalker:
    """Walks a stream in order, one event at a time, so a long stream is never held in memory.
    The first event whose sequence, link or hash is off breaks the chain."""

    def __init__(self, tenant_id: str, user_id: str) -> None:
        self._tenant_id, self._user_id = tenant_id, user_id
        self._expected_sequence, self._previous, self._count = 1, GENESIS_HASH, 0
        self._broken_at = 0

    def feed(self, stored: StoredEvent) -> bool:
        """Check the next event; False once the chain is broken."""
        if self._broken_at:
            return False
        self._count += 1
        intact = (
            stored.sequence == self._expected_sequence
            and stored.previous_hash == self._previous
            and seal(self._tenant_id, self._user_id, stored.sequence, stored.event, self._previous)
            == stored.hash
        )
        if not intact:
            self._broken_at = self._expected_sequence
            return False
        self._previous, self._expected_sequence = stored.hash, self._expected_sequence + 1
        return True

    def report(self) -> VerifyReport:
        if self._broken_at:
            return VerifyReport(False, self._count, self._broken_at, self._previous)
        return VerifyReport(True, self._count, 0, self._previous if self._count else b"")


def verify(tenant_id: str, user_id: str, events: Iterable[StoredEvent]) -> VerifyReport:
    """Walk a whole stream (see ChainWalker)."""
    walker = ChainWalker(tenant_id, user_id)
    for stored in events:
        if not walker.feed(stored):
            break
    return walker.report()


@dataclass(frozen=True)
class Existing:
    """An idempotency key already in the stream."""

    sequence: int
    hash: bytes
    content_hash: bytes


class AppendOutcome(NamedTuple):
    """Where an event landed; duplicate when its idempotency key was already stored."""

    sequence: int
    hash: bytes
    duplicate: bool


@dataclass(frozen=True)
class PlannedAppend:
    """What to insert for a batch, and the outcome of every event in request order."""

    inserts: tuple[StoredEvent, ...]
    outcomes: tuple[AppendOutcome, ...]


def plan_append(
    tenant_id: str,
    user_id: str,
    head_sequence: int,
    head_hash: bytes,
    events: Iterable[NewEvent],
    existing: dict[str, Existing],
) -> PlannedAppend:
    """Seal new events after the head; a stored key with the same content is a duplicate,
    with other content a Conflict (AIP-155)."""
    known = dict(existing)
    sequence, previous = head_sequence, head_hash
    inserts: list[StoredEvent] = []
    outcomes: list[AppendOutcome] = []
    for event in events:
        content = event.content_hash()
        stored = known.get(event.idempotency_key)
        if stored is not None:
            if stored.content_hash != content:
                raise Conflict(
                    f"idempotency key {event.idempotency_key!r} was used with other content"
                )
            outcomes.append(AppendOutcome(stored.sequence, stored.hash, True))
            continue
        sequence += 1
        digest = seal(tenant_id, user_id, sequence, event, previous)
        inserts.append(StoredEvent(sequence, event, previous, digest))
        known[event.idempotency_key] = Existing(sequence, digest, content)
        outcomes.append(AppendOutcome(sequence, digest, False))
        previous = digest
    return PlannedAppend(tuple(inserts), tuple(outcomes))
