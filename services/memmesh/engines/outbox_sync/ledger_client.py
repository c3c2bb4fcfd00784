"""The mirror's port to the Ledger engine, over gRPC."""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from memmesh.common.v1 import scope_pb2
from memmesh.engines.outbox_sync.events import SyncEvent
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.errors import DependencyFailed
from memmesh.runtime.timeconv import timestamp_of

# LedgerService.Append takes at most 100 events per call.
_APPEND_BATCH = 100


def _attribute(name: str, value: str | int) -> pb.Attribute:
    if isinstance(value, str):
        return pb.Attribute(name=name, string_value=value)
    return pb.Attribute(name=name, int_value=value)


class GrpcSyncLedger:
    """Appends the mirror's events; any failure of the ledger is a DependencyFailed (UNAVAILABLE)."""

    def __init__(self, stub: pb_grpc.LedgerServiceStub) -> None:
        self._stub = stub

    async def append(self, tenant_id: str, user_id: str, events: Sequence[SyncEvent]) -> None:
        """Append idempotently, in order."""
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        for start in range(0, len(events), _APPEND_BATCH):
            inputs = [
                pb.EventInput(
                    idempotency_key=event.idempotency_key,
                    event_type=event.event_type,
                    reason_code=event.reason_code,
                    attributes=[_attribute(name, value) for name, value in event.attributes],
                    occur_time=timestamp_of(event.occur_time_us),
                )
                for event in events[start : start + _APPEND_BATCH]
            ]
            try:
                await self._stub.Append(pb.AppendRequest(scope=scope, events=inputs))
            except grpc.aio.AioRpcError as failure:
                raise DependencyFailed("ledger", failure.code().name, "append failed") from failure
