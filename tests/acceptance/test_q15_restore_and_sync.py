"""Seed 001 Q15 (multi-device restore + idempotent memory sync) through real engine processes:
Ledger, CurrentState and OutboxSync, with the device library as the device."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.device import Backoff, ContinuityRecord, DeviceSync, RecordKind, new_key
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as pb_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh

TOKEN = "q15-acceptance-token"
NOW_US = 1_767_225_600_000_000
PATIENT = Backoff(max_attempts=30, initial_s=0.05, max_s=0.5)


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    env = {"MEMMESH_DATA_DIR": str(tmp_path_factory.mktemp("q15")), "MEMMESH_INTERNAL_TOKEN": TOKEN}
    with Mesh(["ledger", "current_state", "outbox_sync"], env=env) as running:
        yield running


def new_user() -> scope_pb2.UserScope:
    token = uuid.uuid4().hex[:10]
    return scope_pb2.UserScope(tenant_id=f"q15-{token}", user_id=f"u-{token}")


def atom_body(n: int, version: int, text: str) -> bytes:
    atom = memory_pb2.Atom(
        atom_id=f"atom-{n}",
        key=f"pref.item_{n}",
        text=text,
        provenance=memory_pb2.PROVENANCE_USER_STATED,
        confidence_bp=9000 - n,
        pinned=n % 5 == 0,
        version=version,
    )
    return atom.SerializeToString(deterministic=True)


def continuity_fixture() -> tuple[list[ContinuityRecord], dict[tuple[str, str], ContinuityRecord]]:
    """The writes a device makes, in order, and the continuity set they must leave behind."""
    writes = [
        ContinuityRecord(RecordKind.ATOM, f"atom-{n}", 1, atom_body(n, 1, f"fact {n}"))
        for n in range(40)
    ]
    writes += [
        ContinuityRecord(RecordKind.ATOM, "atom-3", 2, atom_body(3, 2, "fact 3, corrected")),
        ContinuityRecord(RecordKind.ATOM, "atom-9", 2, b"", tombstone=True),
        ContinuityRecord(RecordKind.ATOM, "atom-21", 2, b"", tombstone=True),
        ContinuityRecord(RecordKind.DO_NOT_MENTION, "topic:divorce", 1, b'{"scope":"topic"}'),
        ContinuityRecord(RecordKind.DO_NOT_REPEAT, "question:birthday", 1, b"{}"),
        ContinuityRecord(
            RecordKind.CORRECTION, "asr:jon->john", 1, b'{"heard":"jon","meant":"john"}'
        ),
        ContinuityRecord(RecordKind.STATE_POINTER, "current_state", 4, b'{"version":4}'),
        ContinuityRecord(RecordKind.THREAD, "thread-1", 3, b'{"status":"open"}'),
        ContinuityRecord(
            RecordKind.LEARNING_POINTER, "last_applied_package", 1, b'{"package_id":"PKG-7"}'
        ),
    ]
    expected: dict[tuple[str, str], ContinuityRecord] = {}
    for record in writes:
        expected[(record.kind, record.key)] = record
    return writes, expected


def device(path: Path, scope: scope_pb2.UserScope, device_id: str, cloud_key: bytes) -> DeviceSync:
    return DeviceSync.open(path, scope.tenant_id, scope.user_id, device_id, new_key(), cloud_key)


async def ledger_events(addr: str, scope: scope_pb2.UserScope) -> list[ledger_pb.LedgerEvent]:
    async with engine_channel(addr, TOKEN) as channel:
        stub = ledger_grpc.LedgerServiceStub(channel)
        return [reply.event async for reply in stub.Read(ledger_pb.ReadRequest(scope=scope))]


async def all_items(
    stub: pb_grpc.OutboxSyncServiceStub, scope: scope_pb2.UserScope
) -> list[pb.OutboxItem]:
    items, cursor = [], 0
    while True:
        reply = await stub.Pull(pb.PullRequest(scope=scope, after_cursor=cursor, limit=100))
        if not reply.items:
            return items
        items.extend(reply.items)
        cursor = reply.next_cursor


class FlakyNetwork:
    """A real OutboxSync stub behind a network that loses replies and delivers pushes twice."""

    def __init__(self, stub: pb_grpc.OutboxSyncServiceStub, script: list[str]) -> None:
        self._stub = stub
        self._script = script

    async def Push(self, request: pb.PushRequest) -> pb.PushResponse:
        step = self._script.pop(0) if self._script else "deliver"
        reply = await self._stub.Push(request)
        if step == "lose_reply":
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "reply lost"
            )
        if step == "deliver_twice":
            return await self._stub.Push(request)
        return reply

    async def Pull(self, request: pb.PullRequest) -> pb.PullResponse:
        return await self._stub.Pull(request)

    async def Restore(self, request: pb.RestoreRequest) -> pb.RestoreResponse:
        return await self._stub.Restore(request)


async def test_at_q15_mem_restore_continuity(mesh: Mesh, tmp_path: Path) -> None:
    scope, cloud_key = new_user(), new_key()
    writes, expected = continuity_fixture()
    phone = device(tmp_path / "phone.sqlite3", scope, "phone", cloud_key)
    for record in writes:
        assert phone.save(record, NOW_US)
    async with engine_channel(mesh.addrs["outbox_sync"], TOKEN) as channel:
        stub = pb_grpc.OutboxSyncServiceStub(channel)
        assert (await phone.flush(stub, NOW_US)).remaining == 0
        tablet = device(tmp_path / "tablet.sqlite3", scope, "tablet", cloud_key)
        report = await tablet.restore(stub, NOW_US, page_size=10)
        laptop = device(tmp_path / "laptop.sqlite3", scope, "laptop", cloud_key)
        await laptop.restore(stub, NOW_US, page_size=500)

    live = {(k, key): r for (k, key), r in expected.items() if not r.tombstone}
    assert {(r.kind, r.key): r for r in tablet.vault.records()} == live
    assert tablet.vault.get(RecordKind.ATOM, "atom-9") == ContinuityRecord(
        RecordKind.ATOM, "atom-9", 2, b"", True
    )
    assert {r.key for r in tablet.vault.records()}.isdisjoint({"atom-9", "atom-21"})
    restored_atom = memory_pb2.Atom.FromString(tablet.vault.get(RecordKind.ATOM, "atom-3").body)  # type: ignore[union-attr]
    assert (restored_atom.text, restored_atom.version, restored_atom.confidence_bp) == (
        "fact 3, corrected",
        2,
        8997,
    )
    assert tablet.vault.listing() == phone.vault.listing() == laptop.vault.listing()
    assert report.items_received == len(expected) and report.cursor == len(writes)


async def test_at_q15_mem_outbox_idempotence(mesh: Mesh, tmp_path: Path) -> None:
    scope, cloud_key = new_user(), new_key()
    writes, expected = continuity_fixture()
    phone = device(tmp_path / "phone.sqlite3", scope, "phone", cloud_key)
    for record in writes[:20]:
        phone.save(record, NOW_US)
    addr = mesh.addrs["outbox_sync"]
    async with engine_channel(addr, TOKEN) as channel:
        stub = pb_grpc.OutboxSyncServiceStub(channel)
        flaky = FlakyNetwork(stub, ["lose_reply", "deliver_twice"])
        first = await phone.flush(flaky, NOW_US, PATIENT)
        assert (first.acked, first.duplicates, first.remaining) == (20, 20, 0)

        for record in writes[20:]:
            phone.save(record, NOW_US)
        mesh.kill("outbox_sync")  # SIGKILL: the server is gone while the device flushes
        down = await phone.flush(stub, NOW_US, Backoff(max_attempts=2, initial_s=0.01, max_s=0.01))
        assert down.error == "UNAVAILABLE" and down.remaining == len(writes) - 20
        assert {count for count, _ in phone.outbox.last_errors().values()} == {2}
        mesh.start(["outbox_sync"])
        assert (await phone.flush(stub, NOW_US, PATIENT)).remaining == 0

        # A second device replays an older version of a corrected atom, late.
        stale = device(tmp_path / "stale.sqlite3", scope, "old-tablet", cloud_key)
        stale.save(
            ContinuityRecord(RecordKind.ATOM, "atom-3", 1, atom_body(3, 1, "fact 3")), NOW_US
        )
        stale.save(
            ContinuityRecord(RecordKind.ATOM, "atom-9", 1, atom_body(9, 1, "fact 9")), NOW_US
        )
        assert (await stale.flush(stub, NOW_US)).remaining == 0

        stored = await all_items(stub, scope)
        new = device(tmp_path / "new.sqlite3", scope, "new-phone", cloud_key)
        await new.restore(stub, NOW_US)

    item_ids = [item.item_id for item in stored]
    assert len(item_ids) == len(set(item_ids)) == len(writes) + 2
    assert [item.cursor for item in stored] == list(range(1, len(writes) + 3))
    assert new.vault.listing() == phone.vault.listing()
    assert new.vault.get(RecordKind.ATOM, "atom-3") == expected[(RecordKind.ATOM, "atom-3")]
    assert new.vault.get(RecordKind.ATOM, "atom-9").tombstone  # type: ignore[union-attr]
    received = [
        e
        for e in await ledger_events(mesh.addrs["ledger"], scope)
        if e.event_type == "OUTBOX_RECEIVED"
    ]
    counted = sum(
        next(a.int_value for a in e.attributes if a.name == "item_count") for e in received
    )
    assert counted == len(item_ids)


async def test_at_q15_mem_no_action_on_restore(mesh: Mesh, tmp_path: Path) -> None:
    scope, cloud_key = new_user(), new_key()
    writes, _ = continuity_fixture()
    async with (
        engine_channel(mesh.addrs["current_state"], TOKEN) as state_channel,
        engine_channel(mesh.addrs["outbox_sync"], TOKEN) as sync_channel,
    ):
        state = state_grpc.CurrentStateServiceStub(state_channel)
        await state.Apply(
            state_pb.ApplyRequest(
                scope=scope,
                change=state_pb.StateChange(set_display_name="Ana"),
                any_version=True,
                reason_code="USER_REQUEST",
                idempotency_key="q15-name",
                now=Timestamp(seconds=NOW_US // 1_000_000),
            )
        )
        before = (await state.Get(state_pb.GetRequest(scope=scope))).state
        stub = pb_grpc.OutboxSyncServiceStub(sync_channel)
        phone = device(tmp_path / "phone.sqlite3", scope, "phone", cloud_key)
        for record in writes:
            phone.save(record, NOW_US)
        await phone.flush(stub, NOW_US)
        events_before = await ledger_events(mesh.addrs["ledger"], scope)

        tablet = device(tmp_path / "tablet.sqlite3", scope, "tablet", cloud_key)
        await tablet.restore(stub, NOW_US + 1)
        after = (await state.Get(state_pb.GetRequest(scope=scope))).state

    events_after = await ledger_events(mesh.addrs["ledger"], scope)
    assert after == before and after.version == before.version == 1
    new_events = events_after[len(events_before) :]
    assert events_after[: len(events_before)] == events_before
    assert [(e.event_type, e.reason_code) for e in new_events] == [
        ("OUTBOX_RESTORE_SERVED", "DEVICE_RESTORE")
    ]
    # Ids and a cursor only, and the subject key the writer made its hashes with.
    assert {a.name for a in new_events[0].attributes} == {
        "device_id",
        "as_of_cursor",
        "subject_key_id",
    }
