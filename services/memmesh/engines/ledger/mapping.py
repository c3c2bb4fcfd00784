"""The only place that knows both the ledger's proto and domain types."""

from __future__ import annotations

from memmesh.engines.ledger.domain.chain import (
    AppendOutcome,
    Attribute,
    ExpectedHead,
    NewEvent,
    StoredEvent,
    VerifyReport,
)
from memmesh.errors import FieldViolation, InvalidInput
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.runtime.timeconv import micros_of, timestamp_of


def _attribute(message: pb.Attribute, path: str) -> Attribute:
    match message.WhichOneof("value"):
        case "string_value":
            return Attribute(message.name, "s", message.string_value)
        case "int_value":
            return Attribute(message.name, "i", message.int_value)
        case "bool_value":
            return Attribute(message.name, "b", message.bool_value)
        case "time_value":
            return Attribute(message.name, "t", micros_of(message.time_value))
        case _:
            raise InvalidInput([FieldViolation(f"{path}.value", "is required")])


def new_events(request: pb.AppendRequest) -> list[NewEvent]:
    """Domain events of an append request; attribute names must be unique per event."""
    events = []
    for index, event in enumerate(request.events):
        path = f"events[{index}]"
        attributes = tuple(
            _attribute(attribute, f"{path}.attributes[{position}]")
            for position, attribute in enumerate(event.attributes)
        )
        names = [a.name for a in attributes]
        if len(names) != len(set(names)):
            raise InvalidInput([FieldViolation(f"{path}.attributes", "names must be unique")])
        events.append(
            NewEvent(
                idempotency_key=event.idempotency_key,
                event_type=event.event_type,
                reason_code=event.reason_code,
                attributes=tuple(sorted(attributes, key=lambda a: a.name)),
                occur_time_us=micros_of(event.occur_time),
            )
        )
    return events


def expected_head(request: pb.AppendRequest) -> ExpectedHead | None:
    """The condition of a conditional append, when the request sets one."""
    if not request.HasField("expected_head"):
        return None
    return ExpectedHead(request.expected_head.event_type, request.expected_head.sequence)


def _attribute_message(attribute: Attribute) -> pb.Attribute:
    match attribute.kind:
        case "s":
            return pb.Attribute(name=attribute.name, string_value=str(attribute.value))
        case "i":
            return pb.Attribute(name=attribute.name, int_value=int(attribute.value))
        case "b":
            return pb.Attribute(name=attribute.name, bool_value=bool(attribute.value))
        case _:
            return pb.Attribute(name=attribute.name, time_value=timestamp_of(int(attribute.value)))


def event_message(stored: StoredEvent) -> pb.LedgerEvent:
    """A stored event as the API returns it."""
    event = stored.event
    return pb.LedgerEvent(
        sequence=stored.sequence,
        idempotency_key=event.idempotency_key,
        event_type=event.event_type,
        reason_code=event.reason_code,
        attributes=[_attribute_message(a) for a in event.attributes],
        occur_time=timestamp_of(event.occur_time_us),
        previous_hash=stored.previous_hash,
        hash=stored.hash,
    )


def verify_response(report: VerifyReport) -> pb.VerifyResponse:
    return pb.VerifyResponse(
        intact=report.intact,
        event_count=report.event_count,
        first_broken_sequence=report.first_broken_sequence,
        head_hash=report.head_hash,
    )


def append_response(outcomes: list[AppendOutcome]) -> pb.AppendResponse:
    return pb.AppendResponse(
        events=[
            pb.AppendedEvent(sequence=o.sequence, hash=o.hash, duplicate=o.duplicate)
            for o in outcomes
        ]
    )
