"""A turn's latency budget: every call's deadline is what is left of it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


class BudgetSpent(Exception):
    """The turn's budget ran out before the call could be made."""


@dataclass(frozen=True)
class TurnBudget:
    """The point in time (monotonic seconds) by which the turn must be answered."""

    deadline_s: float
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def of_ms(cls, total_ms: float, clock: Callable[[], float] = time.monotonic) -> TurnBudget:
        """A budget of total_ms that starts now."""
        return cls(clock() + total_ms / 1000, clock)

    def remaining_s(self) -> float:
        """Seconds left; zero or less when spent."""
        return self.deadline_s - self.clock()

    def timeout_s(self) -> float:
        """The deadline of the next call, or BudgetSpent when nothing is left."""
        left = self.remaining_s()
        if left <= 0:
            raise BudgetSpent(f"turn budget spent {-left * 1000:.1f} ms ago")
        return left
