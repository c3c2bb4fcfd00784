"""ExposureGuard's port to the Ledger engine, over gRPC."""

from __future__ import annotations

import grpc

from memmesh.common.v1 import scope_pb2
from memmesh.engines.exposure_guard.events import RuleEvent
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.errors import Conflict, DependencyFailed
from memmesh.runtime.timeconv import timestamp_of


class GrpcRuleLedger:
    def __init__(self, stub: pb_grpc.LedgerServiceStub) -> None:
        self._stub = stub

    async def record(self, tenant_id: str, user_id: str, event: RuleEvent) -> None:
        """Append the event (a retried request finds its key stored and writes nothing)."""
        request = pb.AppendRequest(
            scope=scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id),
            events=[
                pb.EventInput(
                    idempotency_key=event.idempotency_key,
                    event_type=event.event_type,
                    reason_code=event.reason_code,
                    attributes=[
                        pb.Attribute(name="rule_kind", string_value=event.rule_kind),
                        pb.Attribute(name="target_sha256", string_value=event.target_sha256),
                        pb.Attribute(name="target_type", string_value=event.target_type),
                    ],
                    occur_time=timestamp_of(event.occur_time_us),
                )
            ],
        )
        try:
            await self._stub.Append(request)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.ALREADY_EXISTS:
                raise Conflict("the ledger holds this change's key with other content") from error
            raise DependencyFailed("ledger", error.code().name, "append failed") from error
