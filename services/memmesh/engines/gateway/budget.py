"""The per-turn latency budget: one monotonic deadline, each call gets what is left."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from memmesh.runtime.errors import call_engine


class TurnBudget:
    """Time left of one turn; the inbound deadline, when shorter, wins."""

    def __init__(
        self,
        budget_s: float,
        inbound_remaining_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        limit = budget_s if inbound_remaining_s is None else min(budget_s, inbound_remaining_s)
        self._deadline = clock() + max(limit, 0.0)

    def remaining_s(self) -> float:
        """Seconds left, never negative."""
        return max(self._deadline - self._clock(), 0.0)

    @property
    def expired(self) -> bool:
        """True once no time is left."""
        return self.remaining_s() <= 0.0


async def call_within(budget: TurnBudget, engine: str, method: Any, message: Any) -> Any:
    """Call an engine with what is left of the budget; a failure fails the caller with
    UNAVAILABLE naming the engine (a verdict on bad input passes through as it is), so the
    caller retries (every such step is idempotent)."""
    return await call_engine(engine, method(message, timeout=budget.remaining_s()))
