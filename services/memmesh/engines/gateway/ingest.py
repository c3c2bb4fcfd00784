"""Ingest: archive the turn, acknowledge it, and let its derived effects follow through the
outbox (DESIGN.md: "Ingest never loses a turn"). The ThreadStore indexes the turn it archives
through its own outbox; the gateway never writes to the index.

Ingest is AppendTurn -> (interaction record || Process -> profile fill). The profile fill
follows Process rather than running beside it from the turn: whether a stated name or
language is adopted (kept ACTIVE, safe to speak, confident enough, not refused as off the
record or under a do-not-store rule) is the extractor's decision over the user's atoms,
which the turn's text alone does not carry. The fill is one blind Current State change,
fill_empty_profile: Current State sets only the fields still empty, so the gateway
neither reads the state first nor retries on a version race.

The first attempt of every effect is made before the answer, so in a healthy mesh
the interaction record and the memory are up to date for the next turn; an effect whose
engine is down stays queued and the background drainer delivers it once the engine is back.
A retried Ingest archives nothing twice (AppendTurn is idempotent by turn id) and queues
again whatever a crash may have lost (effects are idempotent by the turn id too).
"""

from __future__ import annotations

import logging

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.control import HeldCommands
from memmesh.engines.gateway.effects import (
    SpokenCommand,
    extract_key,
    heard_command,
    spoken_of,
    turn_effects,
)
from memmesh.engines.gateway.interactions import InteractionPacer
from memmesh.engines.gateway.mapping import command_name
from memmesh.engines.gateway.observe import GatewayObserver
from memmesh.engines.gateway.ports import EffectOutbox, TurnArchive
from memmesh.engines.gateway.resume import ThreadResumer
from memmesh.engines.gateway.work_orders import WorkOrderHandler
from memmesh.errors import DependencyFailed, InvalidInput
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.timeconv import micros_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

log = logging.getLogger("memmesh.gateway.ingest")


class IngestHandler:
    def __init__(
        self,
        threads: TurnArchive,
        outbox: EffectOutbox,
        budget_s: float,
        held: HeldCommands | None = None,
        observer: GatewayObserver | None = None,
        resumer: ThreadResumer | None = None,
        work_orders: WorkOrderHandler | None = None,
        interactions: InteractionPacer | None = None,
    ) -> None:
        self._threads = threads
        # Which user turns record the interaction in Current State (not every one).
        self._interactions = interactions or InteractionPacer()
        self._resumer = resumer
        # "Cancel that" / "forget that" right after a work order was offered.
        self._work_orders = work_orders
        self._observer = observer or GatewayObserver()
        self._outbox = outbox
        self._budget_s = budget_s
        # Privacy commands said in a turn, held until the next Brief has them in force.
        self._held = held

    async def ingest(
        self, request: pb.IngestRequest, inbound_remaining_s: float | None
    ) -> pb.IngestResponse:
        """Archive one turn (a failure fails the Ingest), then queue and first-attempt its
        effects; the outcome and budget left go on the span and into the metrics."""
        tenant_id = request.scope.tenant_id
        with self._observer.call("Ingest", tenant_id, self._budget_s, inbound_remaining_s) as seen:
            return self._observer.ingest(seen, await self._archive(request, inbound_remaining_s))

    async def _archive(
        self, request: pb.IngestRequest, inbound_remaining_s: float | None
    ) -> pb.IngestResponse:
        budget = TurnBudget(self._budget_s, inbound_remaining_s)
        scope, turn = request.scope, request.turn
        appended = await self._threads.append_turn(
            thread_pb.AppendTurnRequest(scope=scope, turn=turn), budget.remaining_s()
        )
        response = pb.IngestResponse(
            ok=True, session_id=turn.session_id, mode=appended.mode, duplicate=appended.duplicate
        )
        recorded = turn.role == memory_pb2.ROLE_USER and self._interactions.due(
            scope.tenant_id, scope.user_id, turn.session_id, micros_of(turn.time)
        )
        effects = turn_effects(scope, turn, request.identity_verified, recorded)
        # A turn that gives a command is acknowledged once the command is in force (or the
        # budget is spent): its extraction gets the whole remaining budget, not one share.
        heard = heard_command(turn)
        spoken = spoken_of(heard)
        patient = frozenset({extract_key(turn.turn_id)}) if spoken else frozenset()
        try:
            delivery = await self._outbox.enqueue_and_deliver(
                scope.tenant_id, scope.user_id, effects, budget.remaining_s(), patient
            )
        except BaseException:
            if recorded:  # not queued: the retried turn records it
                self._interactions.forget(scope.tenant_id, scope.user_id)
            raise
        if turn.role == memory_pb2.ROLE_USER:
            key = extract_key(turn.turn_id)
            result = delivery.results.get(key)
            processed = result if isinstance(result, extractor_pb.ProcessResponse) else None
            response.extraction_queued = key in delivery.pending
            # The extractor's reading wins; an extraction still queued reports the command the
            # turn was heard to give, which the next Brief puts in force before it answers.
            if processed is not None:
                response.command = command_name(processed.command)
            elif spoken is not None:
                response.command = command_name(spoken.command)
            if self._held is not None:
                self._held.heard(scope, turn, spoken, processed)
            await self._resume(request, processed, spoken, budget)
            if self._work_orders is not None:
                # "That" is the work order just offered: what the user meant by it.
                offer_command = await self._work_orders.heard(
                    scope, turn, budget.remaining_s(), heard
                )
                response.command = offer_command or response.command
        return response

    async def _resume(
        self,
        request: pb.IngestRequest,
        processed: extractor_pb.ProcessResponse | None,
        spoken: SpokenCommand | None,
        budget: TurnBudget,
    ) -> None:
        """ "Resume the thread about <topic>" said in the turn: the session's next Brief
        carries the thread. Best effort: the turn is archived whatever happens here."""
        heard = (
            (processed.command, processed.command_target)
            if processed is not None and processed.command
            else (spoken.command, spoken.target)
            if spoken is not None
            else None
        )
        if self._resumer is None or heard is None or heard[0] != extractor_pb.COMMAND_RESUME_THREAD:
            return
        turn = request.turn
        try:
            await self._resumer.resume(
                request.scope, turn.session_id, heard[1], turn.time, budget.remaining_s()
            )
        except (DependencyFailed, InvalidInput):
            log.warning("a spoken resume found no thread to resume", exc_info=True)
