"""What a voice pipeline does with memory on each turn, whatever the framework: Brief the
user's words within the turn's budget and render the bundle, then Ingest the user and
assistant turns in the background. It never raises and never holds the voice up: when
memory fails or runs out of time the turn goes on without it and the reason is logged."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from memmesh.client.budget import BudgetSpent, TurnBudget
from memmesh.client.memory_client import GatewayCallFailed
from memmesh.client.results import BriefResult
from memmesh.client.session import MemorySession
from memmesh.voice.prompt import DEFAULT_BUDGET_BYTES, render_bundle

log = logging.getLogger("memmesh.voice")


@dataclass(frozen=True)
class VoiceMemorySettings:
    """Budgets of the memory work in a turn."""

    # Time the Brief may take before the LLM runs without memory.
    brief_budget_ms: float = 200.0
    # Size of the rendered memory in the LLM's context.
    prompt_budget_bytes: int = DEFAULT_BUDGET_BYTES
    # Time one Ingest may take (it runs beside the conversation, not in the turn).
    ingest_budget_ms: float = 5000.0
    # Time given at hang-up to finish the queued Ingests and close the session.
    close_budget_ms: float = 5000.0


class VoiceMemory:
    """One conversation's memory: `await memory.prompt_for(text)` before the LLM runs,
    `memory.remember(role, text)` for each finished turn, `await memory.aclose()` at hang-up."""

    def __init__(self, session: MemorySession, settings: VoiceMemorySettings | None = None) -> None:
        self.session = session
        self.settings = settings or VoiceMemorySettings()
        self.last_brief = BriefResult()
        self._ingests: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._closing: asyncio.Future[None] | None = None
        self._closed = False

    async def brief(self, user_text: str) -> BriefResult:
        """The bundle for the user's turn, or an empty one with the reason it could not be had."""
        try:
            result = await self.session.brief(
                user_text, TurnBudget.of_ms(self.settings.brief_budget_ms)
            )
        except GatewayCallFailed as error:
            result = BriefResult.without_memory(error.reason_code)
        except BudgetSpent:
            result = BriefResult.without_memory("BUDGET_SPENT")
        except Exception as error:  # the voice must never stall on memory
            result = BriefResult.without_memory(f"CLIENT_ERROR:{type(error).__name__}")
        if result.degraded:
            level = logging.WARNING if not result.bundle.ByteSize() else logging.INFO
            parts = ",".join(result.degraded_parts)
            log.log(level, "memory degraded: %s %s", result.reason_code or "PARTIAL", parts)
        self.last_brief = result
        return result

    async def prompt_for(self, user_text: str) -> str:
        """The memory text for the LLM on this turn ("" when there is none)."""
        result = await self.brief(user_text)
        return render_bundle(result.bundle, result.tone, self.settings.prompt_budget_bytes)

    def remember(self, role: str, text: str) -> None:
        """Queue one finished turn ("user" or "assistant") for Ingest, in order."""
        if self._closed or not text.strip():
            return
        self._ingests.put_nowait((role, text))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write(), name="memmesh-ingest")

    async def _write(self) -> None:
        while True:
            role, text = await self._ingests.get()
            try:
                await self.session.ingest(
                    role, text, TurnBudget.of_ms(self.settings.ingest_budget_ms)
                )
            except Exception as error:  # a lost turn must not end the conversation
                log.warning("memory ingest failed: %s", getattr(error, "reason_code", error))
            finally:
                self._ingests.task_done()

    async def ingested(self) -> None:
        """Wait until every queued turn has been ingested (or given up)."""
        await self._ingests.join()

    def close_soon(self) -> None:
        """aclose() from a synchronous callback (a framework's event); the task is kept here."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self.aclose())

    async def aclose(self) -> None:
        """Finish the queued Ingests and close the session, within the close budget."""
        if self._closed:
            return
        self._closed = True
        try:
            async with asyncio.timeout(self.settings.close_budget_ms / 1000):
                await self.ingested()
                await self.session.close(TurnBudget.of_ms(self.settings.close_budget_ms))
        except Exception as error:
            log.warning("memory close incomplete: %s", getattr(error, "reason_code", error))
        finally:
            if self._writer is not None:
                self._writer.cancel()
