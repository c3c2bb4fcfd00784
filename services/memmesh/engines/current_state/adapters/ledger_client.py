"""Current State's port to the Ledger engine: appends through the kit's LedgerWriter,
replays state events page by page."""

from __future__ import annotations

from collections.abc import AsyncIterator

from memmesh.common.v1 import scope_pb2
from memmesh.engines.current_state import mapping
from memmesh.engines.current_state.domain.state import STATE_EVENT_TYPE, Change, state_event
from memmesh.engines.current_state.ports import LedgerRecord
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.ledger_writer import LedgerWriter
from memmesh.runtime.errors import call_engine

# Events per Read call: a replay never holds more than this in memory or in one call's deadline.
READ_PAGE = 1000


async def _collected(stream: AsyncIterator[pb.ReadResponse]) -> list[pb.ReadResponse]:
    return [reply async for reply in stream]


class GrpcStateLedger:
    """The StateLedger port over a Ledger stub."""

    def __init__(self, stub: pb_grpc.LedgerServiceStub) -> None:
        self._stub = stub
        self._writer = LedgerWriter(stub)

    async def append_change(
        self,
        tenant_id: str,
        user_id: str,
        change: Change,
        reason_code: str,
        idempotency_key: str,
        now_us: int,
    ) -> tuple[int, bool]:
        event = state_event(change, reason_code, idempotency_key, now_us)
        [outcome] = await self._writer.append(tenant_id, user_id, [event])
        return outcome.sequence, outcome.duplicate

    async def read_changes(
        self, tenant_id: str, user_id: str, after_sequence: int
    ) -> AsyncIterator[LedgerRecord]:
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        next_sequence = after_sequence + 1
        while True:
            request = pb.ReadRequest(scope=scope, from_sequence=next_sequence, limit=READ_PAGE)
            page = await call_engine("ledger", _collected(self._stub.Read(request)))
            for reply in page:
                if reply.event.event_type == STATE_EVENT_TYPE:
                    yield LedgerRecord(reply.event.sequence, mapping.change_of_event(reply.event))
            if len(page) < READ_PAGE:
                return
            next_sequence = page[-1].event.sequence + 1
