"""gRPC adapter of the ThreadStore: proto in, one use-case call, proto out."""

from __future__ import annotations

import grpc

from memmesh.engines.thread_store import mapping
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.runtime.timeconv import micros_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

# The resume and entities parts of GetTurnContext are best effort: each may use this share
# of the time left, so a slow one cannot cost the caller its working memory.
RESUME_TIME_SHARE = 0.5


class ThreadStoreServicer(pb_grpc.ThreadStoreServiceServicer):
    def __init__(self, use_cases: ThreadStoreUseCases) -> None:
        self._threads = use_cases

    async def OpenSession(
        self, request: pb.OpenSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.OpenSessionResponse:
        mode, last_us = await self._threads.open_session(
            request.scope.tenant_id,
            request.scope.user_id,
            request.session_id,
            micros_of(request.now),
        )
        return pb.OpenSessionResponse(
            mode=mapping.mode_value(mode), last_interaction_time=mapping.optional_time(last_us)
        )

    async def AppendTurn(
        self, request: pb.AppendTurnRequest, context: grpc.aio.ServicerContext
    ) -> pb.AppendTurnResponse:
        appended = await self._threads.append_turn(
            request.scope.tenant_id, request.scope.user_id, mapping.turn_of(request.turn)
        )
        return mapping.append_turn_response(appended)

    async def CloseSession(
        self, request: pb.CloseSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.CloseSessionResponse:
        closed = await self._threads.close_session(
            request.scope.tenant_id, request.scope.user_id, request.session_id
        )
        return mapping.close_session_response(closed)

    async def Resume(
        self, request: pb.ResumeRequest, context: grpc.aio.ServicerContext
    ) -> pb.ResumeResponse:
        resumed = await self._threads.resume(
            request.scope.tenant_id,
            request.scope.user_id,
            request.session_id,
            micros_of(request.now),
        )
        return mapping.resume_response(resumed)

    async def GetWorkingMemory(
        self, request: pb.GetWorkingMemoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetWorkingMemoryResponse:
        memory = await self._threads.working_memory(
            request.scope.tenant_id, request.scope.user_id, request.session_id, request.max_turns
        )
        return mapping.working_memory_response(memory)

    async def GetTurnContext(
        self, request: pb.GetTurnContextRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetTurnContextResponse:
        remaining = context.time_remaining()
        turn = await self._threads.turn_context(
            request.scope.tenant_id,
            request.scope.user_id,
            request.session_id,
            micros_of(request.now),
            request.max_turns,
            mapping.mode_of(request.mode),
            resume_budget_s=None if remaining is None else remaining * RESUME_TIME_SHARE,
            entity_node_ids=list(request.entity_node_ids),
            entity_fan_out=request.entity_fan_out,
            resume_thread_id=request.resume_thread_id,
        )
        return mapping.turn_context_response(turn)

    async def Expand(
        self, request: pb.ExpandRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExpandResponse:
        expansion = await self._threads.expand(
            request.scope.tenant_id,
            request.scope.user_id,
            list(request.node_ids),
            request.depth,
            request.fan_out,
        )
        return mapping.expand_response(expansion)

    async def ForgetThread(
        self, request: pb.ForgetThreadRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetThreadResponse:
        # A session thread: forgetting it is forgetting the session.
        forgotten = await self._threads.forget_session(
            request.scope.tenant_id, request.scope.user_id, request.thread_id
        )
        return pb.ForgetThreadResponse(
            forgotten=forgotten.forgotten, pending_index_effects=forgotten.pending_index_effects
        )

    async def RedactTurns(
        self, request: pb.RedactTurnsRequest, context: grpc.aio.ServicerContext
    ) -> pb.RedactTurnsResponse:
        redaction = await self._threads.redact_turns(
            request.scope.tenant_id,
            request.scope.user_id,
            list(request.turn_ids),
            list(request.forget_terms),
        )
        return pb.RedactTurnsResponse(
            redacted_turn_ids=redaction.redacted_turn_ids,
            emptied_turn_ids=redaction.emptied_turn_ids,
            pending_index_effects=redaction.pending_index_effects,
        )

    async def ForgetSession(
        self, request: pb.ForgetSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetSessionResponse:
        forgotten = await self._threads.forget_session(
            request.scope.tenant_id, request.scope.user_id, request.session_id
        )
        return pb.ForgetSessionResponse(
            forgotten=forgotten.forgotten,
            turn_ids=forgotten.turn_ids,
            pending_index_effects=forgotten.pending_index_effects,
        )

    async def ForgetUser(
        self, request: pb.ForgetUserRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetUserResponse:
        forgotten = await self._threads.forget_user(request.scope.tenant_id, request.scope.user_id)
        return pb.ForgetUserResponse(
            forgotten=forgotten.forgotten,
            removed_turn_count=forgotten.removed_turn_count,
            pending_index_effects=forgotten.pending_index_effects,
        )

    async def RestrictTurns(
        self, request: pb.RestrictTurnsRequest, context: grpc.aio.ServicerContext
    ) -> pb.RestrictTurnsResponse:
        raised = await self._threads.restrict_turns(
            request.scope.tenant_id,
            request.scope.user_id,
            list(request.turn_ids),
            mapping.exposure_of(request.exposure),
        )
        return pb.RestrictTurnsResponse(restricted_count=raised)

    async def PinThread(
        self, request: pb.PinThreadRequest, context: grpc.aio.ServicerContext
    ) -> pb.PinThreadResponse:
        found = await self._threads.pin_thread(
            request.scope.tenant_id, request.scope.user_id, request.thread_id, request.pinned
        )
        return pb.PinThreadResponse(found=found)

    async def ResumeThread(
        self, request: pb.ResumeThreadRequest, context: grpc.aio.ServicerContext
    ) -> pb.ResumeThreadResponse:
        resumed = await self._threads.resume_thread(
            request.scope.tenant_id,
            request.scope.user_id,
            request.topic,
            request.session_id,
            micros_of(request.now),
        )
        if resumed is None:
            return pb.ResumeThreadResponse(found=False)
        digest, bullets = resumed
        return pb.ResumeThreadResponse(
            found=True, digest=mapping.digest_message(digest), left_off=bullets
        )

    async def RecordThreadUse(
        self, request: pb.RecordThreadUseRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecordThreadUseResponse:
        digest = await self._threads.record_use(
            request.scope.tenant_id,
            request.scope.user_id,
            request.thread_id,
            micros_of(request.now),
        )
        return pb.RecordThreadUseResponse(
            found=digest is not None, use_count=digest.use_count if digest else 0
        )

    async def ForgetTone(
        self, request: pb.ForgetToneRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetToneResponse:
        forgotten = await self._threads.forget_tone(request.scope.tenant_id, request.scope.user_id)
        return pb.ForgetToneResponse(forgotten_signal_count=forgotten)

    async def SetRetentionMode(
        self, request: pb.SetRetentionModeRequest, context: grpc.aio.ServicerContext
    ) -> pb.SetRetentionModeResponse:
        changed = await self._threads.set_retention_mode(
            request.scope.tenant_id, request.scope.user_id, request.remember_everything
        )
        return pb.SetRetentionModeResponse(changed=changed)
