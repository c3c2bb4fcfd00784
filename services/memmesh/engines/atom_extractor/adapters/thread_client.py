"""The ThreadStore as the AtomExtractor's ThreadPort."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.common.v1 import memory_pb2
from memmesh.engines.atom_extractor.mapping import scope_message
from memmesh.errors import DependencyFailed
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc


def _index_through(pending_index_effects: int) -> None:
    """An erasure counts as delivered once the ThreadStore's index holds no copy either: the
    effect stays queued (and its retry delivers what the ThreadStore still holds) until then."""
    if pending_index_effects:
        raise DependencyFailed(
            "retrieval_ranker", "UNAVAILABLE", "the erasure's index changes are still queued"
        )


class GrpcThreads:
    def __init__(self, stub: thread_grpc.ThreadStoreServiceStub) -> None:
        self._stub = stub

    async def restrict_turns(
        self, tenant_id: str, user_id: str, turn_ids: Sequence[str], exposure: str
    ) -> None:
        request = thread_pb.RestrictTurnsRequest(
            scope=scope_message(tenant_id, user_id),
            turn_ids=list(turn_ids),
            exposure=memory_pb2.Exposure.Value(f"EXPOSURE_{exposure}"),
        )
        await call_engine("thread_store", self._stub.RestrictTurns(request))

    async def forget_thread(
        self, tenant_id: str, user_id: str, thread_id: str, now_us: int
    ) -> None:
        request = thread_pb.ForgetThreadRequest(
            scope=scope_message(tenant_id, user_id), thread_id=thread_id, now=timestamp_of(now_us)
        )
        reply = await call_engine("thread_store", self._stub.ForgetThread(request))
        _index_through(reply.pending_index_effects)

    async def redact_turns(
        self,
        tenant_id: str,
        user_id: str,
        turn_ids: Sequence[str],
        terms: Sequence[str],
        now_us: int,
    ) -> None:
        request = thread_pb.RedactTurnsRequest(
            scope=scope_message(tenant_id, user_id),
            turn_ids=list(turn_ids),
            forget_terms=list(terms),
            now=timestamp_of(now_us),
        )
        reply = await call_engine("thread_store", self._stub.RedactTurns(request))
        _index_through(reply.pending_index_effects)

    async def forget_tone(self, tenant_id: str, user_id: str, now_us: int) -> None:
        request = thread_pb.ForgetToneRequest(
            scope=scope_message(tenant_id, user_id), now=timestamp_of(now_us)
        )
        await call_engine("thread_store", self._stub.ForgetTone(request))

    async def set_retention_mode(
        self, tenant_id: str, user_id: str, remember_everything: bool, now_us: int
    ) -> None:
        request = thread_pb.SetRetentionModeRequest(
            scope=scope_message(tenant_id, user_id),
            remember_everything=remember_everything,
            now=timestamp_of(now_us),
        )
        await call_engine("thread_store", self._stub.SetRetentionMode(request))

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        request = thread_pb.ForgetUserRequest(
            scope=scope_message(tenant_id, user_id), now=timestamp_of(now_us)
        )
        reply = await call_engine("thread_store", self._stub.ForgetUser(request))
        _index_through(reply.pending_index_effects)
