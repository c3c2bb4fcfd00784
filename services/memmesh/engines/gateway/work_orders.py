"""Work orders (seed 001 §2.21B) through the gateway: the orchestrator upserts and reads them;
CurrentState owns them and records every status change on the Ledger. The gateway only
passes the calls on, scoped and within the control budget."""

from __future__ import annotations

from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.ports import WorkOrdersPeer
from memmesh.gateway.v1 import gateway_service_pb2 as pb


class WorkOrderHandler:
    def __init__(self, work_orders: WorkOrdersPeer, budget_s: float) -> None:
        self._work_orders = work_orders
        self._budget_s = budget_s

    async def upsert(
        self, request: pb.UpsertWorkOrderRequest, inbound: float | None
    ) -> pb.UpsertWorkOrderResponse:
        """Create or update the order; CurrentState's refusals come back as they are."""
        budget = TurnBudget(self._budget_s, inbound)
        stored = await self._work_orders.upsert_work_order(
            state_pb.UpsertWorkOrderRequest(
                scope=request.scope,
                work_order_id=request.work_order_id,
                title=request.title,
                status=request.status,
                pending_question=request.pending_question,
                summary=request.summary,
                thread_id=request.thread_id,
                now=request.now,
            ),
            budget.remaining_s(),
        )
        return pb.UpsertWorkOrderResponse(work_order=stored.work_order, unchanged=stored.unchanged)

    async def list_pending(
        self, request: pb.ListPendingWorkOrdersRequest, inbound: float | None
    ) -> pb.ListPendingWorkOrdersResponse:
        """The user's pending orders, most recently updated first, then by id."""
        budget = TurnBudget(self._budget_s, inbound)
        listed = await self._work_orders.list_work_orders(
            state_pb.ListWorkOrdersRequest(
                scope=request.scope, pending_only=True, page_size=request.page_size
            ),
            budget.remaining_s(),
        )
        return pb.ListPendingWorkOrdersResponse(work_orders=listed.work_orders)
