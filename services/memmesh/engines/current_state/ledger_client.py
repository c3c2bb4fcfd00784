"""Current State's port to the Ledger engine, over gRPC."""

from __future__ import annotations

from collections.abc import AsyncIterator

from memmesh.common.v1 import scope_pb2
from memmesh.engines.current_state import mapping
from memmesh.engines.current_state.ports import LedgerRecord
from memmesh.engines.current_state.state import STATE_EVENT_TYPE, Change
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.timeconv import timestamp_of


class GrpcStateLedger:
    def __init__(self, stub: pb_grpc.LedgerServiceStub) -> None:
        self._stub = stub

    async def append_change(
        self, tenant_id: str, user_id: str, change: Change, reason_code: str, idempotency_key: str, now_us: int
    ) -> tuple[int, bool]:
        reply = await self._stub.Append(
            pb.AppendRequest(
                scope=scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id),
                events=[
                    pb.EventInput(
                        idempotency_key=idempotency_key,
                        event_type=STATE_EVENT_TYPE,
                        reason_code=reason_code,
                        attributes=mapping.event_attributes(change),
                        occur_time=timestamp_of(now_us),
                    )
                ],
            )
        )
        outcome = reply.events[0]
        return outcome.sequence, outcome.duplicate

    async def read_changes(self, tenant_id: str, user_id: str, after_sequence: int) -> AsyncIterator[LedgerRecord]:
        stream = self._stub.Read(
            pb.ReadRequest(
                scope=scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id), from_sequence=after_sequence + 1
            )
        )
        async for reply in stream:
            if reply.event.event_type == STATE_EVENT_TYPE:
                yield LedgerRecord(reply.event.sequence, mapping.change_of_event(reply.event))
