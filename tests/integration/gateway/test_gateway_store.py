"""The gateway's database on SQLite and PostgreSQL: the outbox tables, and turns left in the
retired pending-extraction queue moved into the outbox when the gateway starts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.engines.gateway.adapters.sql_store import legacy_extractions, open_gateway_database
from memmesh.engines.gateway.effects import EXTRACT, extract_key
from memmesh.engines.gateway.main import adopt_legacy_extractions
from memmesh.outbox import Outbox
from memmesh.runtime.timeconv import micros_of
from memmesh.storage.sql import Database


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = await open_gateway_database(url, tmp_path)
    yield opened
    await opened.close()


async def test_a_turn_left_in_the_retired_queue_is_moved_to_the_outbox(database: Database) -> None:
    tenant, user = "demo", f"u-{uuid.uuid4().hex[:10]}"
    async with database.write("pending_extractions", tenant, user) as tx:
        await tx.execute(
            "INSERT INTO pending_extractions (tenant_id, user_id, turn_id, session_id, text, time_us, attempts, "
            "next_attempt_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (tenant, user, "t1", "s1", "I have a sister named Sarah.", 1_767_225_600_000_000, 3, 0),
        )
    outbox = Outbox(database, {})
    await adopt_legacy_extractions(database, outbox)
    pending = await outbox.pending(tenant, user)
    assert [(e.kind, e.key) for e in pending] == [(EXTRACT, extract_key("t1"))]
    request = extractor_pb.ProcessRequest.FromString(pending[0].payload)
    assert (request.scope.user_id, request.turn.text, micros_of(request.turn.time)) == (
        user, "I have a sister named Sarah.", 1_767_225_600_000_000,
    )  # fmt: skip
    assert not [item for item in await legacy_extractions(database) if item.user_id == user]
