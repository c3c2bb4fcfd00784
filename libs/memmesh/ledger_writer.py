"""The one way engines write on the Ledger: events of one shape (`NewEvent`), sent in as
few Append calls as the Ledger allows, with one error policy, and never a user's words.

    writer = LedgerWriter(ledger_grpc.LedgerServiceStub(channel))
    [outcome] = await writer.append(tenant_id, user_id, [NewEvent(...)])

Privacy: the writer fetches the user's subject key (`memmesh.ledger_keys`) and stores every
idempotency key as an HMAC under it, every `Linkable` attribute as an HMAC and every
`Sealed` one encrypted; each event gets a `subject_key_id` attribute naming the key. The
append names the key, and the Ledger refuses it if the key was shredded meanwhile: the
writer then fetches the fresh key and sends the batch again, once.

A conditional append (`expected_head`) is written only while the user's last event of one
type is where the caller says; otherwise nothing is written and `HeadMoved` is raised. A
projection of that event type passes the sequence it has folded up to, and on success knows
its event is the very next one of the type, with no Read to find out.

Failures: the idempotency key stored with other content raises `Conflict`; any other
failure of the call raises `DependencyFailed` naming the ledger (`call_engine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.common.v1 import scope_pb2
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.ledger_event import Appended, AttributeValue, EventTime, Linkable, NewEvent, Sealed
from memmesh.ledger_keys import Shredded, SubjectKeyring, SubjectKeys, shred_subject_key
from memmesh.runtime.errors import Conflict, DependencyFailed, VersionMismatch, call_engine
from memmesh.runtime.timeconv import timestamp_of

__all__ = [
    "MAX_EVENTS_PER_APPEND",
    "Appended",
    "AttributeValue",
    "EventTime",
    "ExpectedHead",
    "HeadMoved",
    "LedgerWriter",
    "Linkable",
    "NewEvent",
    "Sealed",
    "Shredded",
]

# LedgerService.Append takes at most 100 events per call.
MAX_EVENTS_PER_APPEND = 100
# The attribute naming the subject key an event's hashes and sealed values were made with.
SUBJECT_KEY_ATTRIBUTE = "subject_key_id"


@dataclass(frozen=True)
class ExpectedHead:
    """Append only while the user's last event of `event_type` is at `sequence` (0: the
    stream holds none of that type)."""

    event_type: str
    sequence: int


class HeadMoved(VersionMismatch):
    """A conditional append found the user's last event of its type elsewhere: nothing was
    written."""


def attribute_message(name: str, value: AttributeValue, ring: SubjectKeyring) -> pb.Attribute:
    """A typed Ledger attribute; user content only as a keyed hash or a sealed value."""
    match value:
        case Linkable(text=text):
            return pb.Attribute(name=name, string_value=ring.linkable(text))
        case Sealed(text=text):
            return pb.Attribute(name=name, string_value=ring.seal(name, text))
        case EventTime(micros=micros):
            return pb.Attribute(name=name, time_value=timestamp_of(micros))
        case bool():
            return pb.Attribute(name=name, bool_value=value)
        case int():
            return pb.Attribute(name=name, int_value=value)
        case _:
            return pb.Attribute(name=name, string_value=value)


def event_input(event: NewEvent, ring: SubjectKeyring) -> pb.EventInput:
    """The Append form of an event, hashed and sealed under the user's key."""
    if any(name == SUBJECT_KEY_ATTRIBUTE for name, _ in event.attributes):
        raise ValueError(f"{SUBJECT_KEY_ATTRIBUTE} is set by the writer")
    attributes = [attribute_message(name, value, ring) for name, value in event.attributes]
    attributes.append(pb.Attribute(name=SUBJECT_KEY_ATTRIBUTE, string_value=ring.key_id))
    return pb.EventInput(
        idempotency_key=ring.idempotency_key(event.idempotency_key),
        event_type=event.event_type,
        reason_code=event.reason_code,
        attributes=attributes,
        occur_time=timestamp_of(event.occur_time_us),
    )


class LedgerWriter:
    """Appends events to one user's Ledger stream. Engines sharing one `SubjectKeys` share
    its cache; by default the writer keeps its own."""

    def __init__(self, stub: pb_grpc.LedgerServiceStub, keys: SubjectKeys | None = None) -> None:
        self._stub = stub
        self.keys = keys or SubjectKeys(stub)

    async def append(
        self,
        tenant_id: str,
        user_id: str,
        events: Sequence[NewEvent],
        *,
        expected_head: ExpectedHead | None = None,
    ) -> list[Appended]:
        """Append in order, at most MAX_EVENTS_PER_APPEND per call; one outcome per event.
        A failure part way leaves the earlier calls' events stored: retry with the same keys
        (a retry after the user's key was shredded stores them again, under the new key).
        With expected_head (one call's worth of events at most), the batch is written only
        while the user's last event of that type is at that sequence, else `HeadMoved`;
        a batch whose events are all stored already answers as duplicates either way."""
        if not events:
            return []
        if expected_head is not None and len(events) > MAX_EVENTS_PER_APPEND:
            raise ValueError("a conditional append holds one call's events at most")
        ring = await self.keys.current(tenant_id, user_id)
        try:
            return await self._append(ring, events, expected_head)
        except DependencyFailed as failure:
            if failure.engine != "ledger" or failure.peer_status != "FAILED_PRECONDITION":
                raise
        # The key was shredded since it was fetched: never write with it again.
        self.keys.forget(tenant_id, user_id)
        return await self._append(
            await self.keys.current(tenant_id, user_id), events, expected_head
        )

    async def shred_subject_key(self, tenant_id: str, user_id: str, now_us: int) -> Shredded:
        """Destroy the user's subject key (crypto-shredding, "forget everything about me") and
        drop it from this writer's cache; see `memmesh.ledger_keys.shred_subject_key`. Run it
        after the erasure's own events are appended: events appended later use a fresh key,
        under which anything they name stays linkable."""
        self.keys.forget(tenant_id, user_id)
        try:
            return await shred_subject_key(self._stub, tenant_id, user_id, now_us)
        finally:
            self.keys.forget(tenant_id, user_id)

    async def _append(
        self,
        ring: SubjectKeyring,
        events: Sequence[NewEvent],
        expected_head: ExpectedHead | None = None,
    ) -> list[Appended]:
        scope = scope_pb2.UserScope(tenant_id=ring.tenant_id, user_id=ring.user_id)
        outcomes: list[Appended] = []
        for start in range(0, len(events), MAX_EVENTS_PER_APPEND):
            batch = events[start : start + MAX_EVENTS_PER_APPEND]
            request = pb.AppendRequest(
                scope=scope,
                events=[event_input(event, ring) for event in batch],
                subject_key_id=ring.key_id,
            )
            if expected_head is not None:
                request.expected_head.event_type = expected_head.event_type
                request.expected_head.sequence = expected_head.sequence
            try:
                reply = await call_engine("ledger", self._stub.Append(request))
            except DependencyFailed as failure:
                if failure.engine == "ledger" and failure.peer_status == "ALREADY_EXISTS":
                    raise Conflict(
                        f"the ledger holds a key with other content ({failure.message})"
                    ) from failure
                if (
                    expected_head is not None
                    and failure.engine == "ledger"
                    and failure.peer_status == "ABORTED"
                ):
                    raise HeadMoved(failure.message) from failure
                raise
            outcomes.extend(
                Appended(outcome.sequence, outcome.duplicate) for outcome in reply.events
            )
        return outcomes
