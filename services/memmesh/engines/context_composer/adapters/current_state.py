"""CurrentState as the composer's StateSource (Tier 1)."""

from __future__ import annotations

from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.adapters.calls import scope_of
from memmesh.engines.context_composer.domain.model import PendingWork, UserFacts
from memmesh.runtime.errors import call_engine


class GrpcStateSource:
    def __init__(self, stub: state_grpc.CurrentStateServiceStub) -> None:
        self._stub = stub

    async def facts(
        self, tenant_id: str, user_id: str, with_pending_work: bool = False
    ) -> tuple[UserFacts, PendingWork | None]:
        reply = await call_engine(
            "current_state",
            self._stub.Get(
                state_pb.GetRequest(
                    scope=scope_of(tenant_id, user_id), with_pending_work=with_pending_work
                )
            ),
        )
        pending = (
            mapping.pending_work_of(reply.pending_work_order)
            if reply.HasField("pending_work_order")
            else None
        )
        return mapping.facts_of(reply.state), pending
