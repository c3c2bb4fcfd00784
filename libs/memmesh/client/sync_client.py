"""The gateway SDK for blocking code: the async client run on a private event loop thread,
so both behave the same (deadlines, retries, typed results, errors)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar, Unpack

from memmesh.client.budget import TurnBudget
from memmesh.client.memory_client import GatewaySettings, MemoryClient
from memmesh.client.requests import BriefOptions
from memmesh.client.results import BriefResult, CommandResult, IngestResult

T = TypeVar("T")


class SyncMemoryClient:
    """Blocking client of the gateway; `with SyncMemoryClient(settings) as memory: ...`.

    Same calls and arguments as MemoryClient. Safe to call from several threads.
    """

    def __init__(self, settings: GatewaySettings | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="memmesh-client", daemon=True
        )
        self._thread.start()
        # grpc.aio binds a channel to the loop it is created on.
        self._client = self._run(self._create(settings))

    @staticmethod
    async def _create(settings: GatewaySettings | None) -> MemoryClient:
        return MemoryClient(settings)

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()

    def brief(
        self,
        user_id: str,
        session_id: str,
        now_us: int,
        query: str,
        *,
        budget: TurnBudget | None = None,
        **options: Unpack[BriefOptions],
    ) -> BriefResult:
        """The Context Bundle for the user's turn `query`."""
        call = self._client.brief(user_id, session_id, now_us, query, budget=budget, **options)
        return self._run(call)

    def ingest(
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
        """Record one turn, "user" or "assistant"."""
        return self._run(
            self._client.ingest(user_id, session_id, turn_id, role, text, time_us, budget=budget)
        )

    def command(
        self,
        user_id: str,
        session_id: str,
        command: str,
        now_us: int,
        target: str = "",
        *,
        budget: TurnBudget | None = None,
    ) -> CommandResult:
        """Run a control command by name."""
        return self._run(
            self._client.command(user_id, session_id, command, now_us, target, budget=budget)
        )

    def remember(
        self, user_id: str, *, channel: str = "voice", budget: TurnBudget | None = None
    ) -> tuple[str, ...]:
        """The safe answer to "what do you remember about me?"."""
        return self._run(self._client.remember(user_id, channel=channel, budget=budget))

    def open_session(
        self, user_id: str, session_id: str, now_us: int, *, budget: TurnBudget | None = None
    ) -> str:
        """Open a session: "session_start" or "in_session"."""
        return self._run(self._client.open_session(user_id, session_id, now_us, budget=budget))

    def close_session(
        self, user_id: str, session_id: str, now_us: int, *, budget: TurnBudget | None = None
    ) -> str:
        """Close a session; its digest's summary."""
        return self._run(self._client.close_session(user_id, session_id, now_us, budget=budget))

    def close(self) -> None:
        """Close the channel and stop the loop thread."""
        self._run(self._client.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> SyncMemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
