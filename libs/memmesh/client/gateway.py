"""A small typed async client of the gateway, for tools, benchmarks and tests."""

from __future__ import annotations

import grpc

from memmesh.common.v1 import bundle_pb2, memory_pb2, scope_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from memmesh.runtime.timeconv import timestamp_of

_CHANNELS = {"voice": memory_pb2.CHANNEL_VOICE, "text": memory_pb2.CHANNEL_TEXT}
_ROLES = {"user": memory_pb2.ROLE_USER, "assistant": memory_pb2.ROLE_ASSISTANT}
_MODES = {
    None: bundle_pb2.SESSION_MODE_UNSPECIFIED,
    "session_start": bundle_pb2.SESSION_MODE_SESSION_START,
    "in_session": bundle_pb2.SESSION_MODE_IN_SESSION,
}


class GatewayClient:
    """Calls the gateway as one tenant: `GatewayClient("127.0.0.1:50050", "demo-key", tenant_id="demo")`.

    Times are integer microseconds since the epoch; each call takes an optional timeout in seconds.
    """

    def __init__(
        self,
        addr: str,
        tenant_key: str,
        tenant_id: str = "demo",
        internal_token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        # TLS when credentials are given (grpc.ssl_channel_credentials with the gateway's CA).
        if credentials is None:
            self._channel = grpc.aio.insecure_channel(addr)
        else:
            self._channel = grpc.aio.secure_channel(addr, credentials)
        self._stub = pb_grpc.GatewayServiceStub(self._channel)
        self._metadata = [("authorization", f"Bearer {tenant_key}")]
        if internal_token:
            self._metadata.append(("x-internal-token", internal_token))
        self.tenant_id = tenant_id

    def _scope(self, user_id: str) -> scope_pb2.UserScope:
        return scope_pb2.UserScope(tenant_id=self.tenant_id, user_id=user_id)

    async def brief(
        self,
        user_id: str,
        session_id: str,
        now_us: int,
        query: str,
        *,
        channel: str = "voice",
        mode: str | None = None,
        identity_verified: bool = True,
        unanswered_question_ids: tuple[str, ...] = (),
        user_review_requested: bool = False,
        device_restored: bool = False,
        timeout: float | None = 5.0,
    ) -> pb.BriefResponse:
        """The bundle for a turn."""
        request = pb.BriefRequest(
            scope=self._scope(user_id),
            session_id=session_id,
            now=timestamp_of(now_us),
            mode=_MODES[mode],
            query=query,
            channel=_CHANNELS[channel],
            identity_verified=identity_verified,
            unanswered_question_ids=list(unanswered_question_ids),
            user_review_requested=user_review_requested,
            device_restored=device_restored,
        )
        response: pb.BriefResponse = await self._stub.Brief(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def ingest(
        self,
        user_id: str,
        session_id: str,
        turn_id: str,
        role: str,
        text: str,
        time_us: int,
        *,
        timeout: float | None = 10.0,
    ) -> pb.IngestResponse:
        """Record one turn ("user" or "assistant")."""
        turn = memory_pb2.Turn(
            turn_id=turn_id,
            session_id=session_id,
            role=_ROLES[role],
            text=text,
            time=timestamp_of(time_us),
        )
        request = pb.IngestRequest(scope=self._scope(user_id), turn=turn)
        response: pb.IngestResponse = await self._stub.Ingest(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def command(
        self,
        user_id: str,
        session_id: str,
        command: str,
        now_us: int,
        target: str = "",
        *,
        timeout: float | None = 5.0,
    ) -> pb.CommandResponse:
        """Run a control command by name, e.g. "DO_NOT_MENTION"."""
        request = pb.CommandRequest(
            scope=self._scope(user_id),
            command=pb.UserCommand.Value(f"USER_COMMAND_{command.upper()}"),
            target=target,
            session_id=session_id,
            now=timestamp_of(now_us),
        )
        response: pb.CommandResponse = await self._stub.Command(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def remember(
        self,
        user_id: str,
        *,
        channel: str = "voice",
        identity_verified: bool = True,
        timeout: float | None = 5.0,
    ) -> list[str]:
        """Items of "what do you remember about me?"."""
        request = pb.RememberRequest(
            scope=self._scope(user_id),
            channel=_CHANNELS[channel],
            identity_verified=identity_verified,
        )
        reply = await self._stub.Remember(request, metadata=self._metadata, timeout=timeout)
        return list(reply.items)

    async def open_session(
        self, user_id: str, session_id: str, now_us: int, *, timeout: float | None = 5.0
    ) -> pb.OpenSessionResponse:
        """Whether the session starts now."""
        request = pb.OpenSessionRequest(
            scope=self._scope(user_id), session_id=session_id, now=timestamp_of(now_us)
        )
        response: pb.OpenSessionResponse = await self._stub.OpenSession(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def close_session(
        self, user_id: str, session_id: str, now_us: int, *, timeout: float | None = 5.0
    ) -> pb.CloseSessionResponse:
        """Close the session and get its digest summary."""
        request = pb.CloseSessionRequest(
            scope=self._scope(user_id), session_id=session_id, now=timestamp_of(now_us)
        )
        response: pb.CloseSessionResponse = await self._stub.CloseSession(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def debug_user(
        self, user_id: str, *, timeout: float | None = 5.0
    ) -> pb.DebugUserResponse:
        """Operator view of a user (needs the internal token)."""
        request = pb.DebugUserRequest(scope=self._scope(user_id))
        response: pb.DebugUserResponse = await self._stub.DebugUser(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> GatewayClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
