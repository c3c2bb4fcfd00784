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

    async def facts(self, tenant_id: str, user_id: str) -> UserFacts:
        reply = await call_engine(
            "current_state", self._stub.Get(state_pb.GetRequest(scope=scope_of(tenant_id, user_id)))
        )
        return mapping.facts_of(reply.state)

    async def pending_work(self, tenant_id: str, user_id: str) -> PendingWork | None:
        reply = await call_engine(
            "current_state",
            self._stub.ListWorkOrders(
                state_pb.ListWorkOrdersRequest(
                    scope=scope_of(tenant_id, user_id),
                    pending_only=True,
                    mentionable_only=True,
                    page_size=1,
                )
            ),
        )
        return mapping.pending_work_of(reply.work_orders[0]) if reply.work_orders else None
