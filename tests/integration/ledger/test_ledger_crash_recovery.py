"""A real Ledger process killed with SIGKILL mid-stream loses no acknowledged append."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import scope_pb2
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh

CLIENTS = 8
TOKEN = "crash-test-token"


async def append_until_failure(
    addr: str, scope: scope_pb2.UserScope, client: int, acked: dict[str, int]
) -> None:
    async with engine_channel(addr, TOKEN, default_timeout_s=2.0) as channel:
        stub = pb_grpc.LedgerServiceStub(channel)
        for n in range(100_000):
            key = f"c{client}-{n}"
            request = pb.AppendRequest(
                scope=scope,
                events=[
                    pb.EventInput(
                        idempotency_key=key,
                        event_type="TEST_EVENT",
                        reason_code="LOAD",
                        attributes=[pb.Attribute(name="n", int_value=n)],
                        occur_time=Timestamp(seconds=1_767_225_600),
                    )
                ],
            )
            try:
                reply = await stub.Append(request)
            except grpc.aio.AioRpcError:
                return
            acked[key] = reply.events[0].sequence


async def read_all(addr: str, scope: scope_pb2.UserScope) -> list[pb.LedgerEvent]:
    async with engine_channel(addr, TOKEN) as channel:
        stub = pb_grpc.LedgerServiceStub(channel)
        return [r.event async for r in stub.Read(pb.ReadRequest(scope=scope))]


@pytest.mark.parametrize("storage", ["sqlite", "postgres"])
async def test_kill_9_mid_stream_keeps_every_acknowledged_append(
    storage: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    storage_url = "sqlite" if storage == "sqlite" else request.getfixturevalue("postgres_url")
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path),
        "MEMMESH_STORAGE_URL": storage_url,
        "MEMMESH_INTERNAL_TOKEN": TOKEN,
    }
    mesh = Mesh(["ledger"], env=env)
    mesh.start()
    token = uuid.uuid4().hex[:10]
    scope = scope_pb2.UserScope(tenant_id=f"crash-{token}", user_id=f"u-{token}")
    addr = mesh.addrs["ledger"]
    acked: dict[str, int] = {}
    try:
        writers = [
            asyncio.create_task(append_until_failure(addr, scope, c, acked)) for c in range(CLIENTS)
        ]
        while len(acked) < 400:
            await asyncio.sleep(0.01)
        mesh.kill("ledger")  # SIGKILL while 8 clients are appending
        await asyncio.wait_for(asyncio.gather(*writers), timeout=30)
        acked_before_restart = dict(acked)
        mesh.start(["ledger"])
        async with engine_channel(addr, TOKEN) as channel:
            verified = await pb_grpc.LedgerServiceStub(channel).Verify(
                pb.VerifyRequest(scope=scope)
            )
        events = await read_all(addr, scope)
    finally:
        mesh.stop()
    assert verified.intact and verified.first_broken_sequence == 0
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    stored = {e.idempotency_key: e.sequence for e in events}
    missing = {k: s for k, s in acked_before_restart.items() if stored.get(k) != s}
    assert not missing, f"acknowledged appends lost or moved: {list(missing.items())[:5]}"
    assert len(events) >= len(acked_before_restart) >= 400
