"""Ingest: archive first, then record the interaction, then extract (queued when it cannot run now).

Every step is idempotent by the turn id (AppendTurn, the interaction's idempotency key,
the index upsert, Process), so a retried Ingest re-drives whatever a crash interrupted
and changes nothing that was already done.
"""

from __future__ import annotations

import asyncio
import logging

import grpc

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import memory_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.gateway.budget import TurnBudget, call_within
from memmesh.engines.gateway.extraction_retry import ExtractionRetrier
from memmesh.engines.gateway.profile import adopt_stated_profile
from memmesh.engines.gateway.store import PendingExtraction, PendingStore
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.timeconv import micros_of, timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

log = logging.getLogger("memmesh.gateway.ingest")
INTERACTION_REASON = "TURN_INGESTED"


def turn_document(turn: memory_pb2.Turn, exposure: memory_pb2.Exposure.ValueType) -> ranker_pb.Document:
    """The index document of an archived turn with its archived exposure (the form a Reindex builds)."""
    archived = memory_pb2.Turn()
    archived.CopyFrom(turn)
    archived.exposure = exposure
    return ranker_pb.Document(doc_id=turn.turn_id, kind=ranker_pb.DOCUMENT_KIND_TURN, text=turn.text, turn=archived, time=turn.time)


def process_request(item: PendingExtraction) -> extractor_pb.ProcessRequest:
    """The Process request of a queued turn."""
    turn = memory_pb2.Turn(
        turn_id=item.turn_id, session_id=item.session_id, role=memory_pb2.ROLE_USER, text=item.text, time=timestamp_of(item.time_us)
    )
    scope = {"tenant_id": item.tenant_id, "user_id": item.user_id}
    return extractor_pb.ProcessRequest(scope=scope, turn=turn, now=turn.time)


async def _nothing() -> None:
    return None


def command_name(command: int) -> str:
    """A command's name without its prefix; empty for none."""
    return "" if command == 0 else extractor_pb.Command.Name(command).removeprefix("COMMAND_")


class IngestHandler:
    def __init__(
        self,
        threads: thread_grpc.ThreadStoreServiceStub,
        state: state_grpc.CurrentStateServiceStub,
        ranker: ranker_grpc.RetrievalRankerServiceStub,
        extractor: extractor_grpc.AtomExtractorServiceStub,
        pending: PendingStore,
        retrier: ExtractionRetrier,
        budget_s: float,
        extraction_attempt_s: float,
    ) -> None:
        self._threads = threads
        self._state = state
        self._ranker = ranker
        self._extractor = extractor
        self._pending = pending
        self._retrier = retrier
        self._budget_s = budget_s
        self._attempt_s = extraction_attempt_s

    async def ingest(self, request: pb.IngestRequest, inbound_remaining_s: float | None) -> pb.IngestResponse:
        """Archive, record and extract one turn."""
        budget = TurnBudget(self._budget_s, inbound_remaining_s)
        scope, turn = request.scope, request.turn
        appended = await call_within(budget, "thread_store", self._threads.AppendTurn, thread_pb.AppendTurnRequest(scope=scope, turn=turn)
        )
        response = pb.IngestResponse(ok=True, session_id=turn.session_id, mode=appended.mode, duplicate=appended.duplicate)
        # An INTERNAL_ONLY turn is never indexed: it can never become an excerpt.
        indexed = (
            _nothing()
            if appended.exposure == memory_pb2.EXPOSURE_INTERNAL_ONLY
            else call_within(budget, "retrieval_ranker", self._ranker.Upsert,
                ranker_pb.UpsertRequest(scope=scope, documents=[turn_document(turn, appended.exposure)]),
            )
        )
        if turn.role != memory_pb2.ROLE_USER:
            await indexed
            return response
        recorded = call_within(budget, "current_state", self._state.Apply,
            state_pb.ApplyRequest(
                scope=scope,
                change=state_pb.StateChange(
                    record_interaction=state_pb.InteractionRecord(session_id=turn.session_id, interaction_time=turn.time)
                ),
                any_version=True,
                reason_code=INTERACTION_REASON,
                idempotency_key=f"interaction:{turn.turn_id}"[:128],
                now=turn.time,
            ),
        )
        item = PendingExtraction(scope.tenant_id, scope.user_id, turn.turn_id, turn.session_id, turn.text, micros_of(turn.time))
        # Written ahead of the attempt: a crash mid-attempt leaves the turn queued, not lost.
        await self._pending.add(item)
        # Independent once the turn is archived: index and interaction must succeed before
        # Ingest answers; extraction that cannot finish now stays queued.
        _, _, processed = await asyncio.gather(indexed, recorded, self._extract(item, budget))
        if processed is not None:
            # After the interaction is recorded: both change the same Current State version.
            await adopt_stated_profile(self._state, scope, turn, processed, budget.remaining_s())
        response.extraction_queued = processed is None
        response.command = "" if processed is None else command_name(processed.command)
        return response

    async def _extract(self, item: PendingExtraction, budget: TurnBudget) -> extractor_pb.ProcessResponse | None:
        """One extraction attempt; None when the turn stays queued for the retrier."""
        try:
            processed = await self._extractor.Process(process_request(item), timeout=min(self._attempt_s, budget.remaining_s()))
        except grpc.aio.AioRpcError as error:
            log.info("extraction queued code=%s", error.code().name)
            await self._retrier.schedule_retry(item)
            return None
        await self._pending.remove(item.tenant_id, item.user_id, item.turn_id)
        return processed
