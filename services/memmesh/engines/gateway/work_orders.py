"""Work orders (seed 001 §2.21B) through the gateway: the orchestrator upserts and reads them;
CurrentState owns them and records every status change on the Ledger. The gateway only
passes the calls on, scoped and within the control budget.

Which work order a session was offered (its bullets or its one question reached the user)
is a cache entry per session, as the thread a session asked to resume is (Redis when
configured), so "cancel that" and "forget that" on any gateway replica know what "that" is.
"""

from __future__ import annotations

import logging

from memmesh.common.v1 import bundle_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.ports import WorkOrdersPeer
from memmesh.engines.gateway.resume import TTL_S
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.storage.cache import Cache, user_key

log = logging.getLogger("memmesh.gateway.work_orders")


def still_offered(composed: bundle_pb2.ContextBundle, gated: bundle_pb2.ContextBundle) -> bool:
    """Whether the final gate left the composer's work order offer in the bundle: its
    bullets (the whole bridge when a work order is offered) or its question."""
    if composed.episode_bridge:
        return bool(gated.episode_bridge)
    return bool(composed.clarification.question_id) and (
        gated.clarification.question_id == composed.clarification.question_id
    )


class WorkOrderOffers:
    """The work order each session was last offered."""

    def __init__(self, cache: Cache) -> None:
        self._cache = cache

    @staticmethod
    def _key(scope: scope_pb2.UserScope, session_id: str) -> str:
        return user_key(scope.tenant_id, scope.user_id, "offered_work_order", session_id)

    async def offered(
        self, scope: scope_pb2.UserScope, session_id: str, work_order_id: str
    ) -> None:
        """A Brief of the session offered the work order."""
        try:
            await self._cache.set(self._key(scope, session_id), work_order_id.encode(), TTL_S)
        except Exception:
            log.warning("work order offer cache unavailable")

    async def last_offered(self, scope: scope_pb2.UserScope, session_id: str) -> str:
        """The work order the session was last offered and not yet acted on, or ''."""
        try:
            raw = await self._cache.get(self._key(scope, session_id))
        except Exception:
            log.warning("work order offer cache unavailable")
            return ""
        return raw.decode() if raw else ""

    async def settled(self, scope: scope_pb2.UserScope, session_id: str) -> None:
        """The user acted on the offer: "that" no longer means it."""
        try:
            await self._cache.delete(self._key(scope, session_id))
        except Exception:
            log.warning("work order offer cache unavailable")


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
