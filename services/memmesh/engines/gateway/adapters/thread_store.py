"""ThreadStore, as the gateway calls it (every call through call_engine)."""

from __future__ import annotations

import grpc

from memmesh.runtime.errors import call_engine
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

ENGINE = "thread_store"


class ThreadStoreClient:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = thread_grpc.ThreadStoreServiceStub(channel)

    async def append_turn(
        self, request: thread_pb.AppendTurnRequest, timeout_s: float
    ) -> thread_pb.AppendTurnResponse:
        return await call_engine(ENGINE, self._stub.AppendTurn(request, timeout=timeout_s))

    async def open_session(
        self, request: thread_pb.OpenSessionRequest, timeout_s: float
    ) -> thread_pb.OpenSessionResponse:
        return await call_engine(ENGINE, self._stub.OpenSession(request, timeout=timeout_s))

    async def redact_turns(
        self, request: thread_pb.RedactTurnsRequest, timeout_s: float
    ) -> thread_pb.RedactTurnsResponse:
        return await call_engine(ENGINE, self._stub.RedactTurns(request, timeout=timeout_s))

    async def close_session(
        self, request: thread_pb.CloseSessionRequest, timeout_s: float
    ) -> thread_pb.CloseSessionResponse:
        return await call_engine(ENGINE, self._stub.CloseSession(request, timeout=timeout_s))

    async def resume_thread(
        self, request: thread_pb.ResumeThreadRequest, timeout_s: float
    ) -> thread_pb.ResumeThreadResponse:
        return await call_engine(ENGINE, self._stub.ResumeThread(request, timeout=timeout_s))
