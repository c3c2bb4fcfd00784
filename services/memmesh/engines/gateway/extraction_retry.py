"""Background retries of queued extractions, with exponential backoff per turn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from memmesh.engines.gateway.store import PendingExtraction, PendingStore

log = logging.getLogger("memmesh.gateway.extraction_retry")

# Rows taken per pass, so one pass stays short.
BATCH = 50


def backoff_s(attempts: int, initial_s: float, max_s: float) -> float:
    """Delay before the next attempt after `attempts` failures: doubled each time, capped."""
    return min(initial_s * (2 ** max(attempts - 1, 0)), max_s)


class ExtractionRetrier:
    """Drains the pending-extraction queue until every turn is processed.

    `process` raises on failure; it must be idempotent by turn id (AtomExtractor.Process is).
    """

    def __init__(
        self,
        store: PendingStore,
        process: Callable[[PendingExtraction], Awaitable[object]],
        initial_s: float,
        max_s: float,
        wall_clock_us: Callable[[], int] = lambda: time.time_ns() // 1000,
    ) -> None:
        self._store = store
        self._process = process
        self._initial_s = initial_s
        self._max_s = max_s
        self._now_us = wall_clock_us
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def schedule_retry(self, item: PendingExtraction) -> None:
        """Record a failed attempt and its next time."""
        attempts = item.attempts + 1
        delay_us = int(backoff_s(attempts, self._initial_s, self._max_s) * 1_000_000)
        await self._store.reschedule(item.tenant_id, item.user_id, item.turn_id, attempts, self._now_us() + delay_us)
        self.nudge()

    async def run_once(self) -> int:
        """Attempt every due turn once; returns how many were processed."""
        done = 0
        for item in await self._store.due(self._now_us(), BATCH):
            try:
                await self._process(item)
            except Exception as error:  # any failure keeps the turn queued
                log.info("extraction retry failed turn_attempts=%d error=%s", item.attempts + 1, type(error).__name__)
                await self.schedule_retry(item)
                continue
            await self._store.remove(item.tenant_id, item.user_id, item.turn_id)
            done += 1
        return done

    def nudge(self) -> None:
        """Wake the loop (a turn was queued)."""
        self._wake.set()

    def start(self) -> None:
        """Run the retry loop in the background."""
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """Stop the loop; queued turns stay queued for the next start."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            try:
                await self.run_once()
            except Exception:
                log.exception("extraction retry pass failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._initial_s)
