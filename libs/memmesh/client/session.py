"""One user's conversation with the gateway: the session id and the session_start /
in_session mode by seed 003's rule (a new session, or a gap over 30 minutes, starts one),
and turn ids, so a pipeline does not track them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from memmesh.client.budget import TurnBudget
from memmesh.client.memory_client import MemoryClient
from memmesh.client.results import BriefResult, IngestResult

# Seed 003: a gap above 30 minutes since the last interaction starts a new session.
SESSION_GAP_US = 30 * 60 * 1_000_000


def wall_clock_us() -> int:
    """Now, in microseconds since the epoch."""
    return time.time_ns() // 1_000


def random_session_id() -> str:
    """A fresh session id."""
    return f"s-{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class SessionTurn:
    """Where a turn falls: its session, its mode, and the session a gap just ended."""

    session_id: str
    mode: str
    ended_session_id: str = ""


class SessionTracker:
    """The session of each turn by the 30-minute rule; pure, the caller gives the time."""

    def __init__(
        self,
        new_session_id: Callable[[], str] = random_session_id,
        gap_us: int = SESSION_GAP_US,
    ) -> None:
        self._new_session_id = new_session_id
        self._gap_us = gap_us
        self.session_id = ""
        self._last_us: int | None = None

    def user_turn(self, now_us: int) -> SessionTurn:
        """The session a user turn at now_us belongs to (a new one after a long gap)."""
        ended = ""
        if self._last_us is not None and now_us - self._last_us > self._gap_us:
            ended, self.session_id = self.session_id, ""
        self.touch(now_us)
        if self.session_id:
            return SessionTurn(self.session_id, "in_session")
        self.session_id = self._new_session_id()
        return SessionTurn(self.session_id, "session_start", ended)

    def touch(self, now_us: int) -> None:
        """Record activity at now_us (an assistant turn keeps the session alive too)."""
        self._last_us = now_us if self._last_us is None else max(self._last_us, now_us)


class MemorySession:
    """A user's turns through one MemoryClient: Brief before the answer, Ingest after.

    `await session.brief(text)`, then `await session.ingest("user", text)` and
    `await session.ingest("assistant", reply)`; `await session.close()` at hang-up.
    """

    def __init__(
        self,
        client: MemoryClient,
        user_id: str,
        *,
        channel: str = "voice",
        tracker: SessionTracker | None = None,
        clock_us: Callable[[], int] = wall_clock_us,
    ) -> None:
        self.client = client
        self.user_id = user_id
        self.channel = channel
        self.tracker = tracker or SessionTracker()
        self._clock_us = clock_us
        self._turns = 0
        # Sessions a long gap ended that the gateway has not been told about.
        self.ended_session_ids: list[str] = []

    @property
    def session_id(self) -> str:
        """The current session ("" before the first turn)."""
        return self.tracker.session_id

    def _user_turn(self, now_us: int) -> SessionTurn:
        turn = self.tracker.user_turn(now_us)
        if turn.ended_session_id:
            self.ended_session_ids.append(turn.ended_session_id)
        return turn

    async def brief(self, query: str, budget: TurnBudget | None = None) -> BriefResult:
        """The bundle for the user's turn, in its session and mode."""
        now_us = self._clock_us()
        turn = self._user_turn(now_us)
        return await self.client.brief(
            self.user_id,
            turn.session_id,
            now_us,
            query,
            channel=self.channel,
            mode=turn.mode,
            budget=budget,
        )

    async def ingest(self, role: str, text: str, budget: TurnBudget | None = None) -> IngestResult:
        """Record a turn of the current session (a user turn may open one)."""
        now_us = self._clock_us()
        if role == "user" or not self.session_id:
            self._user_turn(now_us)
        else:
            self.tracker.touch(now_us)
        self._turns += 1
        turn_id = f"{self.session_id}-t{self._turns}"
        return await self.client.ingest(
            self.user_id, self.session_id, turn_id, role, text, now_us, budget=budget
        )

    async def close(self, budget: TurnBudget | None = None) -> None:
        """Close every session this conversation ended, the current one last."""
        now_us = self._clock_us()
        ended = [*self.ended_session_ids, self.session_id] if self.session_id else []
        for session_id in [s for s in ended if s]:
            await self.client.close_session(self.user_id, session_id, now_us, budget=budget)
        self.ended_session_ids.clear()
        self.tracker = SessionTracker()
