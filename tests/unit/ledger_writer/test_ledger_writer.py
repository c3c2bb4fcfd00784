"""The kit's Ledger writer: one event shape, batches of at most 100, one error policy."""

from __future__ import annotations

import grpc
import pytest

from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger_writer import MAX_EVENTS_PER_APPEND, Appended, EventTime, LedgerWriter, NewEvent
from memmesh.runtime.errors import Conflict, DependencyFailed
from memmesh.runtime.timeconv import timestamp_of

NOW_US = 1_767_225_600_000_000


class FakeStub:
    """Records Append requests; answers each event with the next sequence, or fails."""

    def __init__(self, failure: grpc.StatusCode | None = None) -> None:
        self.requests: list[pb.AppendRequest] = []
        self.failure = failure

    async def Append(self, request: pb.AppendRequest) -> pb.AppendResponse:
        self.requests.append(request)
        if self.failure is not None:
            raise grpc.aio.AioRpcError(
                self.failure, grpc.aio.Metadata(), grpc.aio.Metadata(), "refused"
            )
        first = sum(len(r.events) for r in self.requests[:-1]) + 1
        return pb.AppendResponse(
            events=[pb.AppendedEvent(sequence=first + i) for i in range(len(request.events))]
        )


def writer(stub: FakeStub) -> LedgerWriter:
    return LedgerWriter(stub)  # type: ignore[arg-type]  # the fake has the one method the writer calls


def event(n: int) -> NewEvent:
    return NewEvent(f"key-{n}", "STATE_CHANGED", "USER_STATED", (("n", n),), NOW_US)


async def test_events_are_sent_in_order_in_batches_of_at_most_one_hundred() -> None:
    stub = FakeStub()
    events = [event(n) for n in range(MAX_EVENTS_PER_APPEND + 1)]
    outcomes = await writer(stub).append("t", "u", events)
    assert [len(r.events) for r in stub.requests] == [MAX_EVENTS_PER_APPEND, 1]
    assert outcomes == [Appended(n + 1, False) for n in range(MAX_EVENTS_PER_APPEND + 1)]
    assert [e.idempotency_key for r in stub.requests for e in r.events][
        -1
    ] == f"key-{MAX_EVENTS_PER_APPEND}"


async def test_attributes_keep_their_types() -> None:
    stub = FakeStub()
    attributes = (("s", "x"), ("i", 3), ("b", True), ("t", EventTime(NOW_US)))
    typed = NewEvent("k", "STATE_CHANGED", "USER_STATED", attributes, NOW_US)
    await writer(stub).append("t", "u", [typed])
    [sent] = stub.requests[0].events
    assert [a.WhichOneof("value") for a in sent.attributes] == [
        "string_value",
        "int_value",
        "bool_value",
        "time_value",
    ]
    assert sent.attributes[3].time_value == timestamp_of(NOW_US) == sent.occur_time
    assert (sent.event_type, sent.reason_code, sent.idempotency_key) == (
        "STATE_CHANGED",
        "USER_STATED",
        "k",
    )


async def test_a_key_stored_with_other_content_is_a_conflict() -> None:
    with pytest.raises(Conflict):
        await writer(FakeStub(grpc.StatusCode.ALREADY_EXISTS)).append("t", "u", [event(1)])


async def test_any_other_failure_names_the_ledger() -> None:
    with pytest.raises(DependencyFailed) as failed:
        await writer(FakeStub(grpc.StatusCode.UNAVAILABLE)).append("t", "u", [event(1)])
    assert (failed.value.engine, failed.value.status_name) == ("ledger", "UNAVAILABLE")
