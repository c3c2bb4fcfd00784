"""gRPC adapter of the ThreadStore: proto in, one use-case call, proto out."""

from __future__ import annotations

import grpc

from memmesh.engines.thread_store import mapping
from memmesh.engines.thread_store.domain.model import Mode
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.timeconv import micros_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

# The resume part of GetTurnContext is best effort: it may use this share of the time
# left, so a slow one cannot cost the caller its working memory.
RESUME_TIME_SHARE = 0.5


class ThreadStoreServicer(pb_grpc.ThreadStoreServiceServicer):
    def __init__(self, service: ThreadStoreUseCases) -> None:
        self._service = service

    async def OpenSession(self, request: pb.OpenSessionRequest, context: grpc.aio.ServicerContext) -> pb.OpenSessionResponse:
        mode, last_us = await self._service.open_session(
            request.scope.tenant_id, request.scope.user_id, request.session_id, micros_of(request.now)
        )
        return pb.OpenSessionResponse(mode=int(mode), last_interaction_time=mapping.optional_time(last_us))

    async def AppendTurn(self, request: pb.AppendTurnRequest, context: grpc.aio.ServicerContext) -> pb.AppendTurnResponse:
        appended = await self._service.append_turn(
            request.scope.tenant_id, request.scope.user_id, mapping.turn_of(request.turn)
        )
        return pb.AppendTurnResponse(
            mode=int(appended.mode),
            duplicate=appended.duplicate,
            loops_changed=[mapping.loop_message(loop) for loop in (*appended.loops_closed, *appended.loops_opened)],
            loops_opened=[mapping.loop_message(loop) for loop in appended.loops_opened],
            loops_closed=[mapping.loop_message(loop) for loop in appended.loops_closed],
            exposure=int(appended.exposure),
        )

    async def CloseSession(self, request: pb.CloseSessionRequest, context: grpc.aio.ServicerContext) -> pb.CloseSessionResponse:
        digest = await self._service.close_session(request.scope.tenant_id, request.scope.user_id, request.session_id)
        episodes = (
            await self._service.thread_episodes(request.scope.tenant_id, request.scope.user_id, request.session_id)
            if digest is not None
            else []
        )
        return pb.CloseSessionResponse(
            digest=mapping.digest_message(digest), episodes=[mapping.episode_message(e) for e in episodes]
        )

    async def Resume(self, request: pb.ResumeRequest, context: grpc.aio.ServicerContext) -> pb.ResumeResponse:
        resumed = await self._service.resume(
            request.scope.tenant_id, request.scope.user_id, request.session_id, micros_of(request.now)
        )
        return mapping.resume_response(resumed)

    async def GetWorkingMemory(
        self, request: pb.GetWorkingMemoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetWorkingMemoryResponse:
        memory = await self._service.working_memory(
            request.scope.tenant_id, request.scope.user_id, request.session_id, request.max_turns
        )
        return mapping.working_memory_response(memory)

    async def GetTurnContext(
        self, request: pb.GetTurnContextRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetTurnContextResponse:
        remaining = context.time_remaining()
        turn = await self._service.turn_context(
            request.scope.tenant_id,
            request.scope.user_id,
            request.session_id,
            micros_of(request.now),
            request.max_turns,
            Mode(request.mode) if request.mode else None,
            resume_budget_s=None if remaining is None else remaining * RESUME_TIME_SHARE,
        )
        return mapping.turn_context_response(turn)

    async def Expand(self, request: pb.ExpandRequest, context: grpc.aio.ServicerContext) -> pb.ExpandResponse:
        expansion = await self._service.expand(
            request.scope.tenant_id, request.scope.user_id, list(request.node_ids), request.depth, request.fan_out
        )
        return pb.ExpandResponse(
            nodes=[mapping.node_message(n) for n in expansion.nodes],
            edges=[mapping.edge_message(e) for e in expansion.edges],
        )

    async def ListArchive(self, request: pb.ListArchiveRequest, context: grpc.aio.ServicerContext) -> pb.ListArchiveResponse:
        page = await self._service.list_archive(
            request.scope.tenant_id, request.scope.user_id, request.page_size, request.page_token
        )
        return pb.ListArchiveResponse(
            turns=[mapping.turn_message(t) for t in page.turns],
            digests=[mapping.digest_message(d) for d in page.digests],
            next_page_token=page.next_page_token,
            episodes=[mapping.episode_message(e) for e in page.episodes],
        )

    async def ForgetThread(self, request: pb.ForgetThreadRequest, context: grpc.aio.ServicerContext) -> pb.ForgetThreadResponse:
        forgotten = await self._service.forget_thread(request.scope.tenant_id, request.scope.user_id, request.thread_id)
        return pb.ForgetThreadResponse(forgotten=forgotten)

    async def RestrictTurns(self, request: pb.RestrictTurnsRequest, context: grpc.aio.ServicerContext) -> pb.RestrictTurnsResponse:
        raised = await self._service.restrict_turns(
            request.scope.tenant_id, request.scope.user_id, list(request.turn_ids), Exposure(request.exposure)
        )
        return pb.RestrictTurnsResponse(restricted_count=raised)

    async def PinThread(self, request: pb.PinThreadRequest, context: grpc.aio.ServicerContext) -> pb.PinThreadResponse:
        found = await self._service.pin_thread(
            request.scope.tenant_id, request.scope.user_id, request.thread_id, request.pinned
        )
        return pb.PinThreadResponse(found=found)

    async def RecordThreadUse(
        self, request: pb.RecordThreadUseRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecordThreadUseResponse:
        digest = await self._service.record_use(
            request.scope.tenant_id, request.scope.user_id, request.thread_id, micros_of(request.now)
        )
        return pb.RecordThreadUseResponse(found=digest is not None, use_count=digest.use_count if digest else 0)
