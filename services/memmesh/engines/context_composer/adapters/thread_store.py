"""The ThreadStore as the composer's Threads, in one call a turn: the session part is Tier 1;
its resume and the graph entities are Tier 2 (the ThreadStore gives each its share of the
deadline and flags a failed one in the same answer)."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.adapters.calls import scope_of
from memmesh.engines.context_composer.domain.model import SessionContext
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc


class GrpcThreads:
    def __init__(self, stub: thread_grpc.ThreadStoreServiceStub, default_timeout_s: float) -> None:
        self._stub = stub
        self._default_timeout_s = default_timeout_s

    async def session_context(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        max_turns: int,
        now_us: int,
        mode: str,
        entity_node_ids: Sequence[str] = (),
        entity_fan_out: int = 0,
        resume_thread_id: str = "",
    ) -> SessionContext:
        # One call for what OpenSession, GetWorkingMemory, Resume and Expand answer; the
        # ThreadStore gives its resume and entities parts only their Tier-2 share of the deadline.
        request = thread_pb.GetTurnContextRequest(
            scope=scope_of(tenant_id, user_id),
            session_id=session_id,
            now=timestamp_of(now_us),
            max_turns=max_turns,
            mode=mapping.mode_number(mode),
            entity_node_ids=list(entity_node_ids),
            entity_fan_out=entity_fan_out,
            resume_thread_id=resume_thread_id,
        )
        return mapping.session_context_of(
            await call_engine("thread_store", self._stub.GetTurnContext(request))
        )
