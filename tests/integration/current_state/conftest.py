"""Current State with a real Ledger, in process, on SQLite and on PostgreSQL + Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.testing.in_process import InProcessMesh, start_in_process


@pytest_asyncio.fixture(params=["sqlite", "postgres+redis"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    if request.param == "sqlite":
        running = await start_in_process(["ledger", "current_state"], tmp_path)
    else:
        running = await start_in_process(
            ["ledger", "current_state"],
            tmp_path,
            storage_url=request.getfixturevalue("postgres_url"),
            redis_url=request.getfixturevalue("redis_url"),
        )
    yield running
    await running.stop()
