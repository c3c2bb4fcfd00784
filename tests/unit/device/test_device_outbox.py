"""Outbox: ack-gated deletion, idempotent replay, crash recovery, retry with backoff; restore."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from device_fake_mirror import FakeMirror, SimulatedCrash, unavailable

from memmesh.device import (
    Backoff,
    ContinuityRecord,
    DeviceSync,
    IntegrityError,
    OutboxEntry,
    new_key,
)
from memmesh.device.crypto import Sealer, associated_data

NOW_US = 1_767_225_600_000_000
NO_WAIT = Backoff(max_attempts=4, initial_s=0.0, max_s=0.0)


class Keys:
    def __init__(self) -> None:
        self.device, self.cloud = new_key(), new_key()


def device(
    path: Path, keys: Keys, device_id: str = "device-1", device_key: bytes | None = None
) -> DeviceSync:
    return DeviceSync.open(
        path, "tenant-a", "user-1", device_id, device_key or keys.device, keys.cloud
    )


def atoms(sync: DeviceSync, count: int, version: int = 1) -> None:
    for n in range(count):
        sync.save(
            ContinuityRecord("atom", f"atom-{n}", version, f"fact {n} v{version}".encode()), NOW_US
        )


async def test_flush_deletes_only_acknowledged_items(tmp_path: Path, mirror: FakeMirror) -> None:
    sync = device(tmp_path / "d.sqlite3", Keys())
    atoms(sync, 3)
    original = mirror.Push

    async def ack_only_first(request):  # type: ignore[no-untyped-def]
        reply = await original(request)
        del reply.acks[1:]
        return reply

    mirror.Push = ack_only_first  # type: ignore[method-assign]
    report = await sync.flush(mirror, NOW_US)
    assert (report.acked, report.remaining, report.error) == (1, 2, "MISSING_ACK")
    assert [e.logical_key for e in sync.outbox.pending()] == ["atom-1", "atom-2"]
    mirror.Push = original  # type: ignore[method-assign]
    report = await sync.flush(mirror, NOW_US)
    assert (report.acked, report.duplicates, report.remaining) == (2, 2, 0)
    assert len(mirror.items) == 3


async def test_a_crash_between_push_and_ack_is_replayed_without_duplicates(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    keys = Keys()
    sync = device(tmp_path / "d.sqlite3", keys)
    atoms(sync, 5)
    pending_ids = [e.item_id for e in sync.outbox.pending()]
    mirror.script = ["crash_after_store"]
    with pytest.raises(SimulatedCrash):
        await sync.flush(mirror, NOW_US)
    sync.close()
    restarted = device(tmp_path / "d.sqlite3", keys)
    assert [e.item_id for e in restarted.outbox.pending()] == pending_ids
    report = await restarted.flush(mirror, NOW_US)
    assert (report.acked, report.duplicates, report.remaining) == (5, 5, 0)
    assert sorted(s.item.item_id for s in mirror.items) == sorted(pending_ids)


async def test_enqueue_is_idempotent_by_item_id_even_after_the_ack(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    sync = device(tmp_path / "d.sqlite3", Keys())
    atoms(sync, 1)
    [entry] = sync.outbox.pending()
    assert not sync.outbox.enqueue(entry)
    await sync.flush(mirror, NOW_US)
    assert not sync.outbox.enqueue(entry)
    assert sync.outbox.pending() == []
    assert not sync.save(ContinuityRecord("atom", "atom-0", 1, b"fact 0 v1"), NOW_US)


async def test_unavailable_is_retried_with_backoff_and_recorded_per_item(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    sync = device(tmp_path / "d.sqlite3", Keys())
    atoms(sync, 2)
    mirror.script = [unavailable(), unavailable()]
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    report = await sync.outbox.flush(
        mirror, NOW_US, Backoff(max_attempts=5, initial_s=0.1, max_s=0.15), sleep
    )
    assert (report.acked, report.remaining, report.error) == (2, 0, "")
    assert delays == [0.1, 0.15]
    assert mirror.push_calls == 3
    assert mirror.items[0].item.item_id  # stored once each
    assert len(mirror.items) == 2


async def test_a_flush_that_gives_up_keeps_items_with_retry_count_and_last_error(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    sync = device(tmp_path / "d.sqlite3", Keys())
    atoms(sync, 2)
    mirror.script = [unavailable()] * 4
    report = await sync.flush(mirror, NOW_US, NO_WAIT)
    assert (report.acked, report.remaining, report.error) == (0, 2, "UNAVAILABLE")
    assert {count for count, _ in sync.outbox.last_errors().values()} == {4}
    assert all(error.startswith("UNAVAILABLE") for _, error in sync.outbox.last_errors().values())
    pushed: list[int] = []
    original = mirror.Push

    async def spy(request):  # type: ignore[no-untyped-def]
        pushed.append(request.retry_count)
        return await original(request)

    mirror.Push = spy  # type: ignore[method-assign]
    assert (await sync.flush(mirror, NOW_US)).remaining == 0
    assert pushed == [4]


async def test_other_errors_are_not_retried(tmp_path: Path, mirror: FakeMirror) -> None:
    sync = device(tmp_path / "d.sqlite3", Keys())
    atoms(sync, 1)
    mirror.script = [
        grpc.aio.AioRpcError(
            grpc.StatusCode.ALREADY_EXISTS, grpc.aio.Metadata(), grpc.aio.Metadata(), "x"
        )
    ]
    report = await sync.flush(mirror, NOW_US, NO_WAIT)
    assert (report.error, report.remaining, mirror.push_calls) == ("ALREADY_EXISTS", 1, 1)


async def test_restore_rebuilds_an_identical_vault_on_a_new_device(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    keys = Keys()
    old = device(tmp_path / "old.sqlite3", keys)
    atoms(old, 4)
    old.save(ContinuityRecord("atom", "atom-1", 2, b"corrected"), NOW_US)
    old.forget("atom", "atom-2", 2, NOW_US)
    old.save(ContinuityRecord("do_not_mention", "topic-divorce", 1, b"rule"), NOW_US)
    await old.flush(mirror, NOW_US)
    new = device(tmp_path / "new.sqlite3", keys, "device-2", device_key=new_key())
    report = await new.restore(mirror, NOW_US)
    assert new.vault.listing() == old.vault.listing()
    assert "atom-2" not in {r.key for r in new.vault.records()}
    assert report.cursor == len(mirror.items)
    again = device(tmp_path / "again.sqlite3", keys, "device-3", device_key=new_key())
    await again.restore(mirror, NOW_US)
    assert again.vault.listing() == new.vault.listing()


async def test_restore_with_the_wrong_cloud_key_is_refused_and_changes_nothing(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    old = device(tmp_path / "old.sqlite3", Keys())
    atoms(old, 2)
    await old.flush(mirror, NOW_US)
    thief = device(tmp_path / "new.sqlite3", Keys())
    with pytest.raises(IntegrityError):
        await thief.restore(mirror, NOW_US)
    assert thief.vault.records(include_tombstones=True) == []


async def test_the_mirror_never_carries_plaintext_or_device_key_ciphertext(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    keys = Keys()
    sync = device(tmp_path / "d.sqlite3", keys)
    sync.save(ContinuityRecord("atom", "atom-1", 1, b"allergic to peanuts"), NOW_US)
    await sync.flush(mirror, NOW_US)
    [stored] = mirror.items
    assert b"peanuts" not in stored.item.ciphertext
    binding = associated_data(
        "mirror", "tenant-a", "user-1", stored.item.item_id, "atom", "atom-1", 1, False
    )
    assert Sealer(keys.cloud).open(stored.item.ciphertext, binding) == b"allergic to peanuts"
    with pytest.raises(IntegrityError):
        Sealer(keys.device).open(stored.item.ciphertext, binding)


async def test_a_mirror_item_with_altered_metadata_is_refused(
    tmp_path: Path, mirror: FakeMirror
) -> None:
    keys = Keys()
    old = device(tmp_path / "old.sqlite3", keys)
    old.save(ContinuityRecord("atom", "atom-1", 1, b"one"), NOW_US)
    await old.flush(mirror, NOW_US)
    original = mirror.Restore

    async def bumped(request):  # type: ignore[no-untyped-def]
        reply = await original(request)
        reply.items[0].version = 99
        return reply

    mirror.Restore = bumped  # type: ignore[method-assign]
    with pytest.raises(IntegrityError):
        await device(tmp_path / "new.sqlite3", keys, "device-2").restore(mirror, NOW_US)


def test_entries_are_queued_in_order(tmp_path: Path) -> None:
    sync = device(tmp_path / "d.sqlite3", Keys())
    for n in (3, 1, 2):
        sync.outbox.enqueue(OutboxEntry(f"id-{n}", "atom", f"k{n}", 1, False, b"ct", NOW_US))
    assert [e.item_id for e in sync.outbox.pending()] == ["id-3", "id-1", "id-2"]
