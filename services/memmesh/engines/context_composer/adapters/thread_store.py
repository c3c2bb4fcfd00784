"""The ThreadStore as the composer's Threads: the session part is Tier 1 (one call a turn);
its resume and the graph entities are Tier 2 (each with its share of the deadline)."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.adapters.calls import scope_of, tier2_timeout
from memmesh.engines.context_composer.domain.model import (
    Entity,
    SessionContext,
)
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc


class GrpcThreads:
    def __init__(self, stub: thread_grpc.ThreadStoreServiceStub, default_timeout_s: float) -> None:
        self._stub = stub
        self._default_timeout_s = default_timeout_s

    async def session_context(
        self, tenant_id: str, user_id: str, session_id: str, max_turns: int, now_us: int, mode: str
    ) -> SessionContext:
        # One call for what OpenSession, GetWorkingMemory and Resume answer; the ThreadStore
        # gives its resume part only its Tier-2 share of the deadline.
        request = thread_pb.GetTurnContextRequest(
            scope=scope_of(tenant_id, user_id), session_id=session_id, now=timestamp_of(now_us), max_turns=max_turns,
            mode=mapping.mode_number(mode),
        )
        return mapping.session_context_of(await call_engine("thread_store", self._stub.GetTurnContext(request)))

    async def related_entities(self, tenant_id: str, user_id: str, node_ids: Sequence[str], fan_out: int) -> tuple[Entity, ...]:
        request = thread_pb.ExpandRequest(scope=scope_of(tenant_id, user_id), node_ids=list(node_ids), depth=1, fan_out=fan_out)
        call = self._stub.Expand(request, timeout=tier2_timeout(self._default_timeout_s))
        return mapping.entities_of(await call_engine("thread_store", call))
