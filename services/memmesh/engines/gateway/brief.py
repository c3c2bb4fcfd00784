"""Brief: compose within the turn's budget, gate the result, and fail closed.

Any Tier-1 failure (ContextComposer and the Tier-1 engines behind it, the final
ExposureGuard gate) or a budget overrun gives an empty bundle with a reason code and
degraded=true; a partial bundle never leaves unfiltered. Tier-2 parts the composer had to
leave out are named in degraded_parts beside a bundle that keeps its Tier-1 parts.

A request the composer (or an engine behind it) refuses is no failure of the mesh: the
Brief answers with the refusal's own code and the fields it named (INVALID_ARGUMENT on
`now`, say), so the caller fixes the request instead of retrying it or reading an empty
bundle as "nothing remembered".
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from memmesh.bundle_items_proto import filter_items
from memmesh.common.v1 import bundle_pb2
from memmesh.context_composer.v1 import context_composer_service_pb2 as composer_pb
from memmesh.context_composer.v1 import context_composer_service_pb2_grpc as composer_grpc
from memmesh.engines.gateway.asked_questions import AskedQuestions
from memmesh.engines.gateway.budget import TurnBudget, call_within
from memmesh.engines.gateway.control import HeldCommands
from memmesh.engines.gateway.final_gate import (
    apply_gate,
    gate_hints,
    gate_items,
    hint_items,
    prune_vocabulary,
    recount,
)
from memmesh.engines.gateway.observe import GatewayObserver
from memmesh.engines.gateway.outcomes import (
    BUDGET_EXCEEDED,
    IDENTITY_UNVERIFIED,
    TIER2_DEGRADED,
    reason_code,
)
from memmesh.engines.gateway.resume import ThreadResumer
from memmesh.engines.gateway.work_orders import WorkOrderOffers, still_offered
from memmesh.errors import DeadlineExpired, DependencyFailed
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.gateway.v1 import gateway_service_pb2 as pb

log = logging.getLogger("memmesh.gateway.brief")
# The share of the budget a Brief must still have when it gets a slot to compose, before any
# compose has been timed...
START_SHARE = 0.5
# ...and afterwards the time composes have been taking (their moving average, SERVICE_WEIGHT
# for the newest), kept within these shares of the budget: under overload a Brief that could
# not finish fails closed at once instead of composing for nothing, yet a Brief with a slot
# free always composes, so the average keeps being measured.
MIN_START_SHARE = 0.25
MAX_START_SHARE = 0.75
SERVICE_WEIGHT = 0.2
# Refusals that are about the mesh's own credentials, not the caller's request: a Brief
# fails closed on them like on an engine that is down.
_MESH_TRUST_STATUSES = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED"})


class BriefRefused(Exception):
    """The composer refused the Brief's request itself; `error` is its refusal."""

    def __init__(self, error: DependencyFailed) -> None:
        super().__init__(error.message)
        self.error = error


def refused_by_input(error: DependencyFailed) -> bool:
    """Whether a peer's failure is a verdict on the request (bad field, failed
    precondition), to be answered as such rather than as an unavailable mesh."""
    return error.caused_by_input and error.peer_status not in _MESH_TRUST_STATUSES


def empty_response(request: pb.BriefRequest, reason_code: str) -> pb.BriefResponse:
    """The fail-closed answer: no memory, only the request's clock."""
    bundle = bundle_pb2.ContextBundle(mode=request.mode)
    bundle.temporal.now.CopyFrom(request.now)
    return pb.BriefResponse(
        bundle=bundle,
        counters=bundle_pb2.BundleCounters(context_bundle_bytes=bundle.ByteSize()),
        degraded=True,
        reason_code=reason_code,
    )


class BriefHandler:
    def __init__(
        self,
        composer: composer_grpc.ContextComposerServiceStub,
        guard: guard_grpc.ExposureGuardServiceStub,
        asked: AskedQuestions,
        budget_s: float,
        concurrency: int,
        held: HeldCommands | None = None,
        observer: GatewayObserver | None = None,
        resumer: ThreadResumer | None = None,
        offers: WorkOrderOffers | None = None,
    ) -> None:
        self._composer = composer
        self._resumer = resumer
        # The work order each session was offered, for "cancel that" and "forget that".
        self._offers = offers
        self._observer = observer or GatewayObserver()
        # Rule commands said in speech and not yet known to be in force: put in force first.
        self._held = held
        self._guard = guard
        self._asked = asked
        self._budget_s = budget_s
        # Briefs composed at once; the rest wait their turn within their own budget.
        self._slots = asyncio.Semaphore(concurrency)
        # Moving average of how long a compose has been taking (None until one is timed).
        self._compose_s: float | None = None

    async def brief(
        self, request: pb.BriefRequest, inbound_remaining_s: float | None
    ) -> pb.BriefResponse:
        """The bundle of one turn, or an empty one with a reason code; its outcome, budget
        left and counts go on the span and into the metrics."""
        tenant_id = request.scope.tenant_id
        with self._observer.call("Brief", tenant_id, self._budget_s, inbound_remaining_s) as seen:
            return self._observer.brief(seen, await self._answer(request, inbound_remaining_s))

    async def _answer(
        self, request: pb.BriefRequest, inbound_remaining_s: float | None
    ) -> pb.BriefResponse:
        budget = TurnBudget(self._budget_s, inbound_remaining_s)
        if not request.identity_verified:
            return empty_response(request, IDENTITY_UNVERIFIED)
        try:
            # Waiting for a slot counts against the turn's budget, and a turn must start with
            # the time a compose takes still left: one that cannot finish in time fails closed
            # at once instead of loading the mesh with work that would be thrown away.
            async with asyncio.timeout(budget.remaining_s() - self.start_needs_s()):
                await self._slots.acquire()
        except TimeoutError:
            log.info("brief failed closed reason=%s", BUDGET_EXCEEDED)
            return empty_response(request, BUDGET_EXCEEDED)
        started = time.monotonic()
        try:
            return await self._compose(request, budget)
        except BriefRefused as refused:
            # The caller's request, not the mesh, is at fault: its code and fields go back.
            log.info("brief refused status=%s", refused.error.peer_status)
            raise refused.error from None
        except (DependencyFailed, DeadlineExpired) as error:
            reason = reason_code(error)
            log.info("brief failed closed reason=%s", reason)
            return empty_response(request, reason)
        finally:
            self._slots.release()
            self._timed(time.monotonic() - started)

    def start_needs_s(self) -> float:
        """The time a Brief must still have when it gets a slot (see START_SHARE)."""
        if self._compose_s is None:
            return self._budget_s * START_SHARE
        low, high = self._budget_s * MIN_START_SHARE, self._budget_s * MAX_START_SHARE
        return min(max(self._compose_s, low), high)

    def _timed(self, seconds: float) -> None:
        # A compose cut short by the deadline counts with the time it had: a lower bound of
        # what it needed, which still raises the average under overload.
        previous = self._compose_s
        self._compose_s = (
            seconds if previous is None else previous + SERVICE_WEIGHT * (seconds - previous)
        )

    @staticmethod
    async def _call(engine: str, budget: TurnBudget, method: Any, message: Any) -> Any:
        if budget.expired:
            raise DeadlineExpired("the Brief's budget is spent")
        return await call_within(budget, engine, method, message)

    async def _compose(self, request: pb.BriefRequest, budget: TurnBudget) -> pb.BriefResponse:
        scope = request.scope
        if self._held is not None:
            await self._held.settle(scope, budget)
        # An unspecified mode goes to the composer as it is: the ThreadStore decides it in the
        # same call that reads the working memory (no separate OpenSession hop).
        asked = await self._asked.asked(scope.tenant_id, scope.user_id, request.session_id)
        # A thread the session asked to resume, which this Brief carries.
        resuming = await self._resumer.requested(scope, request.session_id) if self._resumer else ""
        compose = self._call(
            "context_composer",
            budget,
            self._composer.Compose,
            composer_pb.ComposeRequest(
                scope=scope,
                session_id=request.session_id,
                now=request.now,
                mode=request.mode,
                query=request.query,
                channel=request.channel,
                unanswered_question_ids=sorted({*asked, *request.unanswered_question_ids})[-128:],
                user_review_requested=request.user_review_requested,
                device_restored=request.device_restored,
                resume_thread_id=resuming,
            ),
        )
        try:
            composed = await compose
        except DependencyFailed as error:
            # Only the composer sees the caller's own fields; a refusal of the rules held
            # for the user (settle) or of the composed items (Filter) stays a failure.
            if refused_by_input(error):
                raise BriefRefused(error) from error
            raise
        items = gate_items(composed.bundle, request.session_id)
        hint_count = len(composed.hints.vocabulary) + len(composed.hints.corrections)
        items += hint_items(composed.hints)
        verdict = await self._call(
            "exposure_guard",
            budget,
            self._guard.Filter,
            guard_pb.FilterRequest(
                scope=scope,
                channel=request.channel,
                items=filter_items(items),
                speak_text_allowed=composed.speak_text_allowed,
                user_asked=composed.user_asked,
            ),
        )
        if budget.expired:
            raise DeadlineExpired("the Brief's budget is spent")
        bundle_items = items[: len(items) - hint_count]
        gated = apply_gate(
            composed.bundle, bundle_items, verdict.allowed_item_ids, verdict.do_not_say_item_ids
        )
        hints = gate_hints(composed.hints, verdict.allowed_item_ids)
        if gated.removed_texts:
            log.info("final gate held back items=%d", len(gated.removed_texts))
        bundle = gated.bundle
        if bundle.HasField("clarification"):
            await self._asked.record(
                scope.tenant_id,
                scope.user_id,
                request.session_id,
                bundle.clarification.question_id,
                asked,
            )
        offered = composed.offered_work_order_id
        if offered and self._offers is not None and still_offered(composed.bundle, bundle):
            await self._offers.offered(scope, request.session_id, offered)
        degraded_parts = list(composed.degraded_parts)
        if resuming and self._resumer is not None and "episode_bridge" not in degraded_parts:
            await self._resumer.carried(scope, request.session_id)
        return pb.BriefResponse(
            bundle=bundle,
            hints=prune_vocabulary(hints, gated.removed_texts),
            tone=composed.tone,
            counters=recount(composed.counters, bundle, verdict.do_not_mention_hits)
            if bundle is not composed.bundle
            else composed.counters,
            degraded=bool(degraded_parts),
            reason_code=TIER2_DEGRADED if degraded_parts else "",
            degraded_parts=degraded_parts,
        )
