"""Work orders (seed 001 §2.21B) through the gateway: the orchestrator upserts and reads them;
CurrentState owns them and records every status change on the Ledger. The gateway only
passes the calls on, scoped and within the control budget.

Which work order a session was offered (its bullets or its one question reached the user)
is a cache entry per session, as the thread a session asked to resume is (Redis when
configured), so "cancel that" and "forget that" on any gateway replica know what "that" is.
"""

from __future__ import annotations

import logging

from memmesh.common.v1 import bundle_pb2, memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.ports import WorkOrdersPeer
from memmesh.engines.gateway.session_entries import SessionEntry
from memmesh.errors import DependencyFailed, InvalidInput, PreconditionFailed
from memmesh.extraction.commands import CommandMatch
from memmesh.extraction.offer_replies import OfferReply, offer_reply
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.storage.cache import Cache

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
        self._offered = SessionEntry(cache, "offered_work_order")

    async def offered(
        self, scope: scope_pb2.UserScope, session_id: str, work_order_id: str
    ) -> None:
        """A Brief of the session offered the work order."""
        await self._offered.put(scope, session_id, work_order_id)

    async def last_offered(self, scope: scope_pb2.UserScope, session_id: str) -> str:
        """The work order the session was last offered and not yet acted on, or ''."""
        return await self._offered.get(scope, session_id)

    async def settled(self, scope: scope_pb2.UserScope, session_id: str) -> None:
        """The user acted on the offer: "that" no longer means it."""
        await self._offered.clear(scope, session_id)


# What the user's command asks of the work order, as CurrentState names it.
COMMANDS = {
    pb.USER_COMMAND_CANCEL_WORK_ORDER: state_pb.WORK_ORDER_COMMAND_CANCEL,
    pb.USER_COMMAND_FORGET_WORK_ORDER: state_pb.WORK_ORDER_COMMAND_DO_NOT_MENTION,
}
_SPOKEN = {
    OfferReply.CANCEL: pb.USER_COMMAND_CANCEL_WORK_ORDER,
    OfferReply.DO_NOT_MENTION: pb.USER_COMMAND_FORGET_WORK_ORDER,
}
# The reason a command's answer names: the ledger event's reason.
_REASONS = {
    state_pb.WORK_ORDER_COMMAND_CANCEL: "CANCELED_BY_USER",
    state_pb.WORK_ORDER_COMMAND_DO_NOT_MENTION: "FORGOTTEN",
}
NOT_FOUND = "WORK_ORDER_NOT_FOUND"


class WorkOrderHandler:
    def __init__(
        self, work_orders: WorkOrdersPeer, budget_s: float, offers: WorkOrderOffers | None = None
    ) -> None:
        self._work_orders = work_orders
        self._budget_s = budget_s
        self._offers = offers

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

    async def command(
        self, request: pb.CommandRequest, inbound: float | None
    ) -> pb.CommandResponse:
        """ "Cancel that" or "forget that" sent as a Command: the work order the target names,
        or with no target the one the session was last offered (FAILED_PRECONDITION
        NO_WORK_ORDER_OFFERED when there is none)."""
        budget = TurnBudget(self._budget_s, inbound)
        target = request.target.strip()
        if not target:
            target = await self._last_offered(request.scope, request.session_id)
        if not target:
            raise PreconditionFailed(
                "no work order was offered in this session: name one in `target`",
                reason="NO_WORK_ORDER_OFFERED",
            )
        command = COMMANDS[request.command]
        reply = await self._work_orders.run_work_order_command(
            state_pb.RunWorkOrderCommandRequest(
                scope=request.scope, work_order_id=target, command=command, now=request.now
            ),
            budget.remaining_s(),
        )
        if not reply.found:
            return pb.CommandResponse(reason_code=NOT_FOUND, work_order_id=target)
        await self._settled(request.scope, request.session_id, target)
        return pb.CommandResponse(reason_code=_REASONS[command], work_order_id=target)

    async def heard(
        self,
        scope: scope_pb2.UserScope,
        turn: memory_pb2.Turn,
        timeout_s: float,
        command: CommandMatch | None = None,
    ) -> str:
        """A user turn answering the work order the session was just offered with "cancel
        that" or "forget that": run it, and name the command ("" for none). Best effort: the
        turn is archived whatever happens here. `command` is the rules' reading of the turn
        when the caller has it."""
        reply = offer_reply(turn.text, command) if turn.role == memory_pb2.ROLE_USER else None
        if reply is None or self._offers is None:
            return ""
        offered = await self._offers.last_offered(scope, turn.session_id)
        if not offered:
            return ""
        request = pb.CommandRequest(
            scope=scope,
            command=_SPOKEN[reply],
            target=offered,
            session_id=turn.session_id,
            now=turn.time,
        )
        try:
            answered = await self.command(request, timeout_s)
        except (DependencyFailed, InvalidInput, PreconditionFailed):
            log.warning("a spoken work order command was not run", exc_info=True)
            return ""
        if answered.reason_code == NOT_FOUND:
            return ""
        return pb.UserCommand.Name(request.command).removeprefix("USER_COMMAND_")

    async def _last_offered(self, scope: scope_pb2.UserScope, session_id: str) -> str:
        return await self._offers.last_offered(scope, session_id) if self._offers else ""

    async def _settled(
        self, scope: scope_pb2.UserScope, session_id: str, work_order_id: str
    ) -> None:
        if self._offers is not None and work_order_id == await self._offers.last_offered(
            scope, session_id
        ):
            await self._offers.settled(scope, session_id)
