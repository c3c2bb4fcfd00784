"""Command, sessions, Remember and the operator's DebugUser: thin calls with deadlines."""

from __future__ import annotations

import logging
from collections import Counter

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.gateway.budget import TurnBudget, call_within
from memmesh.engines.gateway.store import PendingStore
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.errors import DependencyFailed
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

log = logging.getLogger("memmesh.gateway.control")

# The capsule is read in pages of this size for "what do you remember about me?".
ATOM_PAGE = 1000
# RecallSummary accepts at most this many atoms.
MAX_RECALL_ATOMS = 20_000


def digest_document(digest: thread_pb.Digest) -> ranker_pb.Document:
    """The index document of a session or episode digest (the form a Reindex builds)."""
    lines = [line for line in (digest.title, digest.summary, *digest.key_entities) if line]
    document = ranker_pb.Document(
        doc_id=digest.episode_id or digest.thread_id, kind=ranker_pb.DOCUMENT_KIND_DIGEST, text="\n".join(lines),
        evidence_turn_ids=digest.evidence_turn_ids, thread_id=digest.thread_id if digest.episode_id else "",
    )  # fmt: skip
    if digest.HasField("update_time"):
        document.time.CopyFrom(digest.update_time)
    return document


def extractor_command(command: int) -> int:
    """The AtomExtractor command of a gateway command (same names)."""
    name = pb.UserCommand.Name(command).removeprefix("USER_COMMAND_")
    return int(extractor_pb.Command.Value(f"COMMAND_{name}"))


class ControlHandler:
    def __init__(
        self,
        threads: thread_grpc.ThreadStoreServiceStub,
        state: state_grpc.CurrentStateServiceStub,
        ranker: ranker_grpc.RetrievalRankerServiceStub,
        extractor: extractor_grpc.AtomExtractorServiceStub,
        guard: guard_grpc.ExposureGuardServiceStub,
        pending: PendingStore,
        budget_s: float,
    ) -> None:
        self._threads = threads
        self._state = state
        self._ranker = ranker
        self._extractor = extractor
        self._guard = guard
        self._pending = pending
        self._budget_s = budget_s

    async def command(self, request: pb.CommandRequest, inbound: float | None) -> pb.CommandResponse:
        """Run a user control command through the AtomExtractor."""
        budget = TurnBudget(self._budget_s, inbound)
        reply = await call_within(budget, "atom_extractor", self._extractor.RunCommand,
            extractor_pb.RunCommandRequest(
                scope=request.scope,
                command=extractor_command(request.command),
                target=request.target,
                session_id=request.session_id,
                now=request.now,
            ),
        )
        reasons = sorted({change.reason_code for change in reply.changes if change.reason_code})
        name = pb.UserCommand.Name(request.command).removeprefix("USER_COMMAND_")
        return pb.CommandResponse(
            atom_ids=sorted({change.atom.atom_id for change in reply.changes if change.atom.atom_id}),
            reason_code=reasons[0] if len(reasons) == 1 else f"USER_COMMAND_{name}",
        )

    async def open_session(self, request: pb.OpenSessionRequest, inbound: float | None) -> pb.OpenSessionResponse:
        """Whether the session starts now (ThreadStore's session rules)."""
        budget = TurnBudget(self._budget_s, inbound)
        reply = await call_within(budget, "thread_store", self._threads.OpenSession,
            thread_pb.OpenSessionRequest(scope=request.scope, session_id=request.session_id, now=request.now),
        )
        return pb.OpenSessionResponse(mode=reply.mode)

    async def close_session(self, request: pb.CloseSessionRequest, inbound: float | None) -> pb.CloseSessionResponse:
        """Close the session; its digest and episode digests are indexed so later turns can page them in."""
        budget = TurnBudget(self._budget_s, inbound)
        reply = await call_within(budget, "thread_store", self._threads.CloseSession,
            thread_pb.CloseSessionRequest(scope=request.scope, session_id=request.session_id, now=request.now),
        )
        if reply.digest.thread_id:
            await call_within(budget, "retrieval_ranker", self._ranker.Upsert,
                ranker_pb.UpsertRequest(
                    scope=request.scope, documents=[digest_document(d) for d in (reply.digest, *reply.episodes)]
                ),
            )
        return pb.CloseSessionResponse(digest_summary=reply.digest.summary)

    async def _all_atoms(self, scope: scope_pb2.UserScope, budget: TurnBudget) -> list[memory_pb2.Atom]:
        atoms: list[memory_pb2.Atom] = []
        token = ""
        while len(atoms) < MAX_RECALL_ATOMS:
            page = await call_within(budget, "atom_extractor", self._extractor.ListAtoms,
                extractor_pb.ListAtomsRequest(scope=scope, page_size=ATOM_PAGE, page_token=token),
            )
            atoms.extend(page.atoms)
            token = page.next_page_token
            if not token:
                break
        return atoms[:MAX_RECALL_ATOMS]

    async def remember(self, request: pb.RememberRequest, inbound: float | None) -> pb.RememberResponse:
        """The bounded safe summary; nothing for an unverified speaker."""
        if not request.identity_verified:
            return pb.RememberResponse()
        budget = TurnBudget(self._budget_s, inbound)
        atoms = await self._all_atoms(request.scope, budget)
        if not atoms:
            return pb.RememberResponse()
        # Text-only items are not read aloud in a spoken summary.
        summary = await call_within(budget, "exposure_guard", self._guard.RecallSummary,
            guard_pb.RecallSummaryRequest(scope=request.scope, channel=request.channel, atoms=atoms, speak_text_allowed=False),
        )
        return pb.RememberResponse(items=summary.items)

    async def debug_user(self, request: pb.DebugUserRequest, inbound: float | None) -> pb.DebugUserResponse:
        """Operator view: last session, last interaction, atom counts by status, queued extractions."""
        budget = TurnBudget(self._budget_s, inbound)
        state = await call_within(budget, "current_state", self._state.Get, state_pb.GetRequest(scope=request.scope))
        try:
            atoms = await self._all_atoms(request.scope, budget)
            counts = Counter(memory_pb2.AtomStatus.Name(a.status).removeprefix("ATOM_STATUS_") for a in atoms)
            atom_counts = [f"{status}={count}" for status, count in sorted(counts.items())]
        except DependencyFailed:
            # The operator view degrades rather than fails while the capsule is down.
            atom_counts = ["atom_extractor=UNAVAILABLE"]
        response = pb.DebugUserResponse(
            last_session_id=state.state.last_session_id,
            atom_counts=atom_counts,
            pending_extractions=await self._pending.count(request.scope.tenant_id, request.scope.user_id),
        )
        if state.state.HasField("last_interaction_time"):
            response.last_interaction_time.CopyFrom(state.state.last_interaction_time)
        return response
