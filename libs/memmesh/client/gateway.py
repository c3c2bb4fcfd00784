"""A small typed async client of the gateway, for tools, benchmarks and tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import grpc

from memmesh.client.requests import (
    BriefOptions,
    brief_request,
    close_session_request,
    command_request,
    ingest_request,
    open_session_request,
    remember_request,
    upsert_work_order_request,
    user_scope,
)
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc


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
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        # TLS when credentials are given (grpc.ssl_channel_credentials with the gateway's CA).
        if credentials is None:
            self._channel = grpc.aio.insecure_channel(addr, options=list(options))
        else:
            self._channel = grpc.aio.secure_channel(addr, credentials, options=list(options))
        self._stub = pb_grpc.GatewayServiceStub(self._channel)
        self._metadata = [("authorization", f"Bearer {tenant_key}")]
        if internal_token:
            self._metadata.append(("x-internal-token", internal_token))
        self.tenant_id = tenant_id

    async def brief(
        self,
        user_id: str,
        session_id: str,
        now_us: int,
        query: str,
        *,
        timeout: float | None = 5.0,
        **options: Unpack[BriefOptions],
    ) -> pb.BriefResponse:
        """The bundle for a turn (voice channel, verified speaker unless options say otherwise)."""
        scope = user_scope(self.tenant_id, user_id)
        request = brief_request(scope, session_id, now_us, query, **options)
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
        identity_verified: bool = True,
        timeout: float | None = 10.0,
    ) -> pb.IngestResponse:
        """Record one turn ("user" or "assistant"); only a verified speaker's turn teaches
        the learning capsule."""
        request = ingest_request(
            user_scope(self.tenant_id, user_id),
            session_id,
            turn_id,
            role,
            text,
            time_us,
            identity_verified=identity_verified,
        )
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
        request = command_request(
            user_scope(self.tenant_id, user_id), session_id, command, now_us, target
        )
        response: pb.CommandResponse = await self._stub.Command(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def upsert_work_order(
        self,
        user_id: str,
        work_order_id: str,
        title: str,
        status: str,
        now_us: int,
        pending_question: str = "",
        *,
        timeout: float | None = 5.0,
    ) -> pb.UpsertWorkOrderResponse:
        """Create or update a work order; the status by name, e.g. "CLARIFY"."""
        request = upsert_work_order_request(
            user_scope(self.tenant_id, user_id),
            work_order_id,
            title,
            status,
            now_us,
            pending_question,
        )
        response: pb.UpsertWorkOrderResponse = await self._stub.UpsertWorkOrder(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def pending_work_orders(
        self, user_id: str, *, timeout: float | None = 5.0
    ) -> pb.ListPendingWorkOrdersResponse:
        """The user's pending work orders, most recently updated first."""
        request = pb.ListPendingWorkOrdersRequest(scope=user_scope(self.tenant_id, user_id))
        response: pb.ListPendingWorkOrdersResponse = await self._stub.ListPendingWorkOrders(
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
        request = remember_request(user_scope(self.tenant_id, user_id), channel, identity_verified)
        reply = await self._stub.Remember(request, metadata=self._metadata, timeout=timeout)
        return list(reply.items)

    async def open_session(
        self, user_id: str, session_id: str, now_us: int, *, timeout: float | None = 5.0
    ) -> pb.OpenSessionResponse:
        """Whether the session starts now."""
        request = open_session_request(user_scope(self.tenant_id, user_id), session_id, now_us)
        response: pb.OpenSessionResponse = await self._stub.OpenSession(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def close_session(
        self, user_id: str, session_id: str, now_us: int, *, timeout: float | None = 5.0
    ) -> pb.CloseSessionResponse:
        """Close the session and get its digest summary."""
        request = close_session_request(user_scope(self.tenant_id, user_id), session_id, now_us)
        response: pb.CloseSessionResponse = await self._stub.CloseSession(
            request, metadata=self._metadata, timeout=timeout
        )
        return response

    async def debug_user(
        self, user_id: str, *, timeout: float | None = 5.0
    ) -> pb.DebugUserResponse:
        """Operator view of a user (needs the internal token)."""
        request = pb.DebugUserRequest(scope=user_scope(self.tenant_id, user_id))
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
