"""The one way engines write on the Ledger: events of one shape (`NewEvent`), sent in as
few Append calls as the Ledger allows, with one error policy.

    writer = LedgerWriter(ledger_grpc.LedgerServiceStub(channel))
    [outcome] = await writer.append(tenant_id, user_id, [NewEvent(...)])

Failures: the idempotency key stored with other content raises `Conflict`; any other
failure of the call raises `DependencyFailed` naming the ledger (`call_engine`).
"""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.common.v1 import scope_pb2
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.ledger_event import Appended, AttributeValue, EventTime, NewEvent
from memmesh.runtime.errors import Conflict, DependencyFailed, call_engine
from memmesh.runtime.timeconv import timestamp_of

__all__ = [
    "MAX_EVENTS_PER_APPEND",
    "Appended",
    "AttributeValue",
    "EventTime",
    "LedgerWriter",
    "NewEvent",
]

# LedgerService.Append takes at most 100 events per call.
MAX_EVENTS_PER_APPEND = 100


def attribute_message(name: str, value: AttributeValue) -> pb.Attribute:
    """A typed Ledger attribute."""
    match value:
        case EventTime(micros=micros):
            return pb.Attribute(name=name, time_value=timestamp_of(micros))
        case bool():
            return pb.Attribute(name=name, bool_value=value)
        case int():
            return pb.Attribute(name=name, int_value=value)
        case _:
            return pb.Attribute(name=name, string_value=value)


def event_input(event: NewEvent) -> pb.EventInput:
    """The Append form of an event."""
    return pb.EventInput(
        idempotency_key=event.idempotency_key,
        event_type=event.event_type,
        reason_code=event.reason_code,
        attributes=[attribute_message(name, value) for name, value in event.attributes],
        occur_time=timestamp_of(event.occur_time_us),
    )


class LedgerWriter:
    """Appends events to one user's Ledger stream."""

    def __init__(self, stub: pb_grpc.LedgerServiceStub) -> None:
        self._stub = stub

    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[NewEvent]
    ) -> list[Appended]:
        """Append in order, at most MAX_EVENTS_PER_APPEND per call; one outcome per event.
        A failure part way leaves the earlier calls' events stored: retry with the same keys."""
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        outcomes: list[Appended] = []
        for start in range(0, len(events), MAX_EVENTS_PER_APPEND):
            batch = events[start : start + MAX_EVENTS_PER_APPEND]
            request = pb.AppendRequest(scope=scope, events=[event_input(event) for event in batch])
            try:
                reply = await call_engine("ledger", self._stub.Append(request))
            except DependencyFailed as failure:
                if failure.engine == "ledger" and failure.peer_status == "ALREADY_EXISTS":
                    raise Conflict(
                        f"the ledger holds a key with other content ({failure.message})"
                    ) from failure
                raise
            outcomes.extend(
                Appended(outcome.sequence, outcome.duplicate) for outcome in reply.events
            )
        return outcomes
