"""OutboxSync over gRPC with a real Ledger, driven by the device library, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import scope_pb2
from memmesh.device import ContinuityRecord, DeviceSync, new_key
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as pb_grpc
from memmesh.runtime.errors import details_of
from memmesh.testing.in_process import InProcessMesh, start_in_process

NOW = Timestamp(seconds=1_767_225_600)
NOW_US = 1_767_225_600_000_000


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    overrides = (
        {}
        if request.param == "sqlite"
        else {"storage_url": request.getfixturevalue("postgres_url")}
    )
    running = await start_in_process(["ledger", "outbox_sync"], tmp_path, **overrides)
    yield running
    await running.stop()


async def ledger_events(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> list[ledger_pb.LedgerEvent]:
    ledger = ledger_grpc.LedgerServiceStub(mesh.channel("ledger"))
    return [reply.event async for reply in ledger.Read(ledger_pb.ReadRequest(scope=scope))]


def device(path: Path, scope: scope_pb2.UserScope, device_id: str, cloud_key: bytes) -> DeviceSync:
    return DeviceSync.open(path, scope.tenant_id, scope.user_id, device_id, new_key(), cloud_key)


async def test_flush_then_restore_on_a_new_device_over_grpc(
    mesh: InProcessMesh, scope: scope_pb2.UserScope, tmp_path: Path
) -> None:
    stub = pb_grpc.OutboxSyncServiceStub(mesh.channel("outbox_sync"))
    cloud_key = new_key()
    phone = device(tmp_path / "phone.sqlite3", scope, "phone", cloud_key)
    for n in range(30):
        phone.save(ContinuityRecord("atom", f"atom-{n}", 1, f"fact {n}".encode()), NOW_US)
    phone.forget("atom", "atom-7", 2, NOW_US)
    report = await phone.flush(stub, NOW_US)
    assert (report.acked, report.duplicates, report.remaining) == (31, 0, 0)

    tablet = device(tmp_path / "tablet.sqlite3", scope, "tablet", cloud_key)
    restored = await tablet.restore(stub, NOW_US, page_size=7)
    assert tablet.vault.listing() == phone.vault.listing()
    assert restored.pages == 5 and restored.cursor == 31
    assert "atom-7" not in {r.key for r in tablet.vault.records()}

    events = await ledger_events(mesh, scope)
    assert [e.event_type for e in events] == ["OUTBOX_RECEIVED", "OUTBOX_RESTORE_SERVED"]
    received = {a.name: a for a in events[0].attributes}
    assert received["device_id"].string_value == "phone"
    assert (
        received["item_count"].int_value,
        received["first_cursor"].int_value,
        received["last_cursor"].int_value,
    ) == (31, 1, 31)
    assert events[0].reason_code == "DEVICE_PUSH" and events[1].reason_code == "DEVICE_RESTORE"


async def test_a_replayed_batch_is_acked_as_duplicates_and_recorded_once(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = pb_grpc.OutboxSyncServiceStub(mesh.channel("outbox_sync"))
    items = [
        pb.OutboxItem(
            item_id=f"i{n}",
            item_kind="atom",
            logical_key=f"atom-{n}",
            version=1,
            ciphertext=b"sealed",
        )
        for n in range(3)
    ]
    request = pb.PushRequest(scope=scope, device_id="phone", items=items, now=NOW)
    first = await stub.Push(request)
    again = await stub.Push(
        pb.PushRequest(scope=scope, device_id="phone", items=items, now=NOW, retry_count=1)
    )
    assert [(a.cursor, a.duplicate) for a in first.acks] == [(1, False), (2, False), (3, False)]
    assert [(a.cursor, a.duplicate) for a in again.acks] == [(1, True), (2, True), (3, True)]
    assert [e.event_type for e in await ledger_events(mesh, scope)] == ["OUTBOX_RECEIVED"]
    pulled = await stub.Pull(pb.PullRequest(scope=scope, after_cursor=1, limit=1))
    assert [i.item_id for i in pulled.items] == ["i1"] and pulled.next_cursor == 2


async def test_the_same_item_id_with_other_ciphertext_is_already_exists(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = pb_grpc.OutboxSyncServiceStub(mesh.channel("outbox_sync"))

    def push(ciphertext: bytes) -> pb.PushRequest:
        item = pb.OutboxItem(
            item_id="i1", item_kind="atom", logical_key="atom-1", ciphertext=ciphertext
        )
        return pb.PushRequest(scope=scope, device_id="phone", items=[item], now=NOW)

    await stub.Push(push(b"one"))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Push(push(b"two"))
    assert raised.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert details_of(raised.value)[0] == "OUTBOX_ITEM_CONFLICT"


async def test_a_push_without_logical_key_names_the_field(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = pb_grpc.OutboxSyncServiceStub(mesh.channel("outbox_sync"))
    item = pb.OutboxItem(item_id="i1", item_kind="atom", ciphertext=b"x")
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Push(pb.PushRequest(scope=scope, device_id="phone", items=[item], now=NOW))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "items[0].logical_key" in details_of(raised.value)[1]


async def test_a_forged_page_token_is_invalid_argument(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = pb_grpc.OutboxSyncServiceStub(mesh.channel("outbox_sync"))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Restore(
            pb.RestoreRequest(scope=scope, device_id="tablet", now=NOW, page_token="7.3")
        )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details_of(raised.value)[1] == ["page_token"]
