"""The gateway SDK for voice pipelines: typed results, deadlines from the turn budget,
retries of UNAVAILABLE only, the tenant key on every call and TLS when configured."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Self, TypeVar, Unpack

import grpc

from memmesh.client.budget import TurnBudget
from memmesh.client.gateway import GatewayClient
from memmesh.client.requests import BriefOptions
from memmesh.client.results import MODE_NAMES, BriefResult, CommandResult, IngestResult
from memmesh.runtime.channels import CHANNEL_OPTIONS

T = TypeVar("T")


class GatewayCallFailed(Exception):
    """A gateway call ended with a gRPC status other than OK."""

    def __init__(self, reason_code: str, details: str) -> None:
        super().__init__(f"{reason_code}: {details}")
        self.reason_code = reason_code


@dataclass(frozen=True)
class GatewaySettings:
    """Where the gateway is and who calls it; defaults are those of `make run`."""

    addr: str = "127.0.0.1:50050"
    tenant_key: str = "demo-key"
    tenant_id: str = "demo"
    # PEM of the CA that signed the gateway's certificate; plaintext when empty.
    root_certificates: bytes = b""
    # Deadline of a call given no turn budget.
    default_timeout_s: float = 5.0

    def credentials(self) -> grpc.ChannelCredentials | None:
        """TLS credentials when a CA is configured."""
        if not self.root_certificates:
            return None
        return grpc.ssl_channel_credentials(root_certificates=self.root_certificates)


async def _typed(call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise GatewayCallFailed(error.code().name, error.details() or "") from error


class MemoryClient:
    """Async client of the gateway for one tenant; use `async with MemoryClient(settings)`.

    Times are integer microseconds since the epoch. Each call's deadline is what is left of
    the given TurnBudget (BudgetSpent when nothing is), else settings.default_timeout_s.
    Failures raise GatewayCallFailed with the status name as reason_code.
    """

    def __init__(self, settings: GatewaySettings | None = None) -> None:
        self.settings = settings or GatewaySettings()
        # The mesh's channel options: retries of UNAVAILABLE only, declared in the service
        # config (the request never reached a handler, so a retry cannot apply a write twice).
        self._gateway = GatewayClient(
            self.settings.addr,
            self.settings.tenant_key,
            tenant_id=self.settings.tenant_id,
            credentials=self.settings.credentials(),
            options=CHANNEL_OPTIONS,
        )

    def _timeout(self, budget: TurnBudget | None) -> float:
        return self.settings.default_timeout_s if budget is None else budget.timeout_s()

    async def brief(
        self,
        user_id: str,
        session_id: str,
        now_us: int,
        query: str,
        *,
        budget: TurnBudget | None = None,
        **options: Unpack[BriefOptions],
    ) -> BriefResult:
        """The Context Bundle for the user's turn `query` (voice channel, verified speaker
        unless the options say otherwise)."""
        timeout = self._timeout(budget)
        response = await _typed(
            self._gateway.brief(user_id, session_id, now_us, query, timeout=timeout, **options)
        )
        return BriefResult.of(response)

    async def ingest(
        self,
        user_id: str,
        session_id: str,
        turn_id: str,
        role: str,
        text: str,
        time_us: int,
        *,
        budget: TurnBudget | None = None,
    ) -> IngestResult:
        """Record one turn, "user" or "assistant" (a repeated turn_id is a no-op)."""
        response = await _typed(
            self._gateway.ingest(
                user_id, session_id, turn_id, role, text, time_us, timeout=self._timeout(budget)
            )
        )
        return IngestResult.of(response)

    async def command(
        self,
        user_id: str,
        session_id: str,
        command: str,
        now_us: int,
        target: str = "",
        *,
        budget: TurnBudget | None = None,
    ) -> CommandResult:
        """Run a control command by name ("DO_NOT_MENTION", "FORGET", ...)."""
        response = await _typed(
            self._gateway.command(
                user_id, session_id, command, now_us, target, timeout=self._timeout(budget)
            )
        )
        return CommandResult.of(response)

    async def remember(
        self, user_id: str, *, channel: str = "voice", budget: TurnBudget | None = None
    ) -> tuple[str, ...]:
        """The safe answer to "what do you remember about me?" (at most 10 items)."""
        items = await _typed(
            self._gateway.remember(user_id, channel=channel, timeout=self._timeout(budget))
        )
        return tuple(items)

    async def open_session(
        self, user_id: str, session_id: str, now_us: int, *, budget: TurnBudget | None = None
    ) -> str:
        """Open a session: "session_start" or "in_session"."""
        response = await _typed(
            self._gateway.open_session(user_id, session_id, now_us, timeout=self._timeout(budget))
        )
        return MODE_NAMES[response.mode]

    async def close_session(
        self, user_id: str, session_id: str, now_us: int, *, budget: TurnBudget | None = None
    ) -> str:
        """Close a session; its digest's summary."""
        response = await _typed(
            self._gateway.close_session(user_id, session_id, now_us, timeout=self._timeout(budget))
        )
        return response.digest_summary

    async def close(self) -> None:
        """Close the channel."""
        await self._gateway.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
