"""Making erased bytes unreadable without holding every erasure behind it.

A reclaim (SQLite VACUUM and WAL truncation; on PostgreSQL it only schedules a background
VACUUM FULL) can take long; erasures that arrive while one runs share the next pass instead
of queueing one each, and an erasure's answer waits at most `wait_s` for it (the pass goes
on; the rows are already gone from every read).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger("memmesh.storage")


class Reclaimer:
    """One reclaim pass at a time, plus one more for the erasures that came meanwhile."""

    def __init__(self, reclaim: Callable[[], Awaitable[object]], wait_s: float | None) -> None:
        self._reclaim = reclaim
        # None: an erasure waits until its pass is done.
        self._wait_s = wait_s
        self._task: asyncio.Task[None] | None = None
        self._again = False

    async def reclaimed(self) -> None:
        """Have the erased bytes reclaimed; wait at most `wait_s` for it."""
        if self._task is not None and not self._task.done():
            self._again = True
        else:
            self._task = asyncio.ensure_future(self._passes())
        if self._wait_s is None:
            await asyncio.shield(self._task)
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), self._wait_s)
        except TimeoutError:
            log.info("reclaiming erased bytes goes on after the erasure answered")

    async def _passes(self) -> None:
        while True:
            self._again = False
            try:
                await self._reclaim()
            except Exception:
                log.warning("reclaiming erased bytes failed", exc_info=True)
            if not self._again:
                return

    async def close(self) -> None:
        """Let a pass under way finish."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
