"""gRPC adapters of the composer's ports; every call goes through call_engine, so a failure is
one DependencyFailed naming the engine at fault."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.bundle_items import GuardItem
from memmesh.bundle_items_proto import filter_items
from memmesh.common.v1 import scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.model import (
    CorrectionPair,
    Entity,
    GuardVerdict,
    ResumeCandidate,
    Retrieved,
    SessionContext,
    SessionMemory,
    UserFacts,
)
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime import deadlines
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

# A Tier-2 call may use this share of the time left, so a slow one cannot starve the
# Tier-1 filter step that follows the parallel gather.
TIER2_TIME_SHARE = 0.5


def _scope(tenant_id: str, user_id: str) -> scope_pb2.UserScope:
    return scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)


class GrpcStateSource:
    def __init__(self, stub: state_grpc.CurrentStateServiceStub) -> None:
        self._stub = stub

    async def facts(self, tenant_id: str, user_id: str) -> UserFacts:
        reply = await call_engine("current_state", self._stub.Get(state_pb.GetRequest(scope=_scope(tenant_id, user_id))))
        return mapping.facts_of(reply.state)


class GrpcRanker:
    """Pulled candidates (Tier 2: the bundle goes without atoms, excerpts and digests)."""

    def __init__(self, stub: ranker_grpc.RetrievalRankerServiceStub, default_timeout_s: float) -> None:
        self._stub = stub
        self._default_timeout_s = default_timeout_s

    async def retrieve(
        self, tenant_id: str, user_id: str, query: str, now_us: int, max_atoms: int, max_turns: int, max_digests: int
    ) -> Retrieved:
        request = ranker_pb.RetrieveRequest(
            scope=_scope(tenant_id, user_id),
            query=query,
            now=timestamp_of(now_us),
            caps=ranker_pb.RetrieveCaps(max_atoms=max_atoms, max_turns=max_turns, max_digests=max_digests),
        )
        timeout = deadlines.outbound_timeout(self._default_timeout_s) * TIER2_TIME_SHARE
        return mapping.retrieved_of(await call_engine("retrieval_ranker", self._stub.Retrieve(request, timeout=timeout)))


class GrpcThreads:
    def __init__(self, stub: thread_grpc.ThreadStoreServiceStub, default_timeout_s: float) -> None:
        self._stub = stub
        self._default_timeout_s = default_timeout_s

    async def working_memory(self, tenant_id: str, user_id: str, session_id: str, max_turns: int) -> SessionMemory:
        request = thread_pb.GetWorkingMemoryRequest(scope=_scope(tenant_id, user_id), session_id=session_id, max_turns=max_turns)
        return mapping.session_of(await call_engine("thread_store", self._stub.GetWorkingMemory(request)))

    async def resume(self, tenant_id: str, user_id: str, session_id: str, now_us: int) -> ResumeCandidate:
        request = thread_pb.ResumeRequest(scope=_scope(tenant_id, user_id), session_id=session_id, now=timestamp_of(now_us))
        timeout = deadlines.outbound_timeout(self._default_timeout_s) * TIER2_TIME_SHARE
        return mapping.resume_of(await call_engine("thread_store", self._stub.Resume(request, timeout=timeout)))

    async def session_context(self, tenant_id: str, user_id: str, session_id: str, max_turns: int, now_us: int) -> SessionContext:
        # One call for what OpenSession, GetWorkingMemory and Resume answer; the ThreadStore
        # gives its resume part only its Tier-2 share of the deadline.
        request = thread_pb.GetTurnContextRequest(
            scope=_scope(tenant_id, user_id), session_id=session_id, now=timestamp_of(now_us), max_turns=max_turns
        )
        return mapping.session_context_of(await call_engine("thread_store", self._stub.GetTurnContext(request)))


    async def related_entities(self, tenant_id: str, user_id: str, node_ids: Sequence[str], fan_out: int) -> tuple[Entity, ...]:
        request = thread_pb.ExpandRequest(scope=_scope(tenant_id, user_id), node_ids=list(node_ids), depth=1, fan_out=fan_out)
        timeout = deadlines.outbound_timeout(self._default_timeout_s) * TIER2_TIME_SHARE
        return mapping.entities_of(await call_engine("thread_store", self._stub.Expand(request, timeout=timeout)))


class GrpcGuard:
    def __init__(self, stub: guard_grpc.ExposureGuardServiceStub) -> None:
        self._stub = stub

    async def filter(
        self,
        tenant_id: str,
        user_id: str,
        channel: str,
        items: Sequence[GuardItem],
        speak_text_allowed: bool,
        user_asked: bool,
    ) -> GuardVerdict:
        request = guard_pb.FilterRequest(
            scope=_scope(tenant_id, user_id),
            channel=mapping.channel_number(channel),
            items=filter_items(items),
            speak_text_allowed=speak_text_allowed,
            user_asked=user_asked,
        )
        return mapping.verdict_of(await call_engine("exposure_guard", self._stub.Filter(request)))


class GrpcCorrections:
    """Correction pairs from the AtomExtractor (Tier 2: the hint bundle goes without them)."""

    # The hint bundle carries at most this many pairs.
    LIMIT = 20

    def __init__(self, stub: extractor_grpc.AtomExtractorServiceStub, default_timeout_s: float) -> None:
        self._stub = stub
        self._default_timeout_s = default_timeout_s

    async def corrections(self, tenant_id: str, user_id: str) -> tuple[CorrectionPair, ...]:
        request = extractor_pb.ListCorrectionsRequest(scope=_scope(tenant_id, user_id), limit=self.LIMIT)
        timeout = deadlines.outbound_timeout(self._default_timeout_s) * TIER2_TIME_SHARE
        reply = await call_engine("atom_extractor", self._stub.ListCorrections(request, timeout=timeout))
        return mapping.corrections_of([record.correction for record in reply.corrections])
