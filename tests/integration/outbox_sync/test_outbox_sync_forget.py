"""A forget reaches every device (seed 001 §2.11.11): OutboxSync drops the forgotten
artifacts' stored versions and writes a tombstone above each, so a device that pulls deletes
its copy and a new device never restores it; on SQLite and PostgreSQL, over gRPC."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.common.v1 import scope_pb2
from memmesh.device import ContinuityRecord, DeviceSync, new_key
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as pb_grpc
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.in_process import InProcessMesh, start_in_process

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


def device(path: Path, scope: scope_pb2.UserScope, device_id: str, cloud_key: bytes) -> DeviceSync:
    return DeviceSync.open(path, scope.tenant_id, scope.user_id, device_id, new_key(), cloud_key)


async def pulled(
    stub: pb_grpc.OutboxSyncServiceStub, scope: scope_pb2.UserScope
) -> list[pb.OutboxItem]:
    return list((await stub.Pull(pb.PullRequest(scope=scope, after_cursor=0))).items)


async def test_forgotten_atoms_are_deleted_on_every_device(
    mesh: InProcessMesh, scope: scope_pb2.UserScope, tmp_path: Path
) -> None:
    stub = pb_grpc.OutboxSyncServiceStub(mesh.channel("outbox_sync"))
    cloud_key = new_key()
    phone = device(tmp_path / "phone.sqlite3", scope, "phone", cloud_key)
    for n in range(5):
        phone.save(ContinuityRecord("atom", f"atom-{n}", 1, f"fact {n}".encode()), NOW_US)
    phone.save(ContinuityRecord("atom", "atom-2", 2, b"fact 2, said again"), NOW_US)
    await phone.flush(stub, NOW_US)
    tablet = device(tmp_path / "tablet.sqlite3", scope, "tablet", cloud_key)
    await tablet.pull(stub)
    assert "atom-2" in {r.key for r in tablet.vault.records()}
    top = max(item.cursor for item in await pulled(stub, scope))

    forgot = await stub.ForgetItems(
        pb.ForgetItemsRequest(
            scope=scope, item_kind="atom", logical_keys=["atom-2"], now=timestamp_of(NOW_US)
        )
    )
    assert forgot.tombstone_count == 1
    # Every stored version went with its ciphertext; one server tombstone above them remains,
    # on a cursor never given out before.
    [left] = [i for i in await pulled(stub, scope) if i.logical_key == "atom-2"]
    assert left.tombstone and left.ciphertext == b"" and left.version == 3 and left.cursor > top

    await tablet.pull(stub)
    assert "atom-2" not in {r.key for r in tablet.vault.records()}
    assert {r.key for r in tablet.vault.records()} == {"atom-0", "atom-1", "atom-3", "atom-4"}
    laptop = device(tmp_path / "laptop.sqlite3", scope, "laptop", cloud_key)
    await laptop.restore(stub, NOW_US)
    assert "atom-2" not in {r.key for r in laptop.vault.records()}
    # Forgetting it again writes nothing new.
    again = await stub.ForgetItems(
        pb.ForgetItemsRequest(
            scope=scope, item_kind="atom", logical_keys=["atom-2"], now=timestamp_of(NOW_US)
        )
    )
    assert again.tombstone_count == 0


async def test_forget_user_deletes_everything_on_every_device(
    mesh: InProcessMesh, scope: scope_pb2.UserScope, tmp_path: Path
) -> None:
    stub = pb_grpc.OutboxSyncServiceStub(mesh.channel("outbox_sync"))
    cloud_key = new_key()
    phone = device(tmp_path / "phone.sqlite3", scope, "phone", cloud_key)
    phone.save(ContinuityRecord("atom", "atom-1", 1, b"my brother Kwame"), NOW_US)
    phone.save(ContinuityRecord("rule", "rule-1", 1, b"do not mention Kwame"), NOW_US)
    await phone.flush(stub, NOW_US)

    forgot = await stub.ForgetUser(pb.ForgetUserRequest(scope=scope, now=timestamp_of(NOW_US)))
    assert forgot.tombstone_count == 2
    assert all(i.tombstone and not i.ciphertext for i in await pulled(stub, scope))
    await phone.pull(stub)
    assert list(phone.vault.records()) == []
    fresh = device(tmp_path / "fresh.sqlite3", scope, "fresh", cloud_key)
    await fresh.restore(stub, NOW_US)
    assert list(fresh.vault.records()) == []
    assert (
        await stub.ForgetUser(pb.ForgetUserRequest(scope=scope, now=timestamp_of(NOW_US)))
    ).tombstone_count == 0
