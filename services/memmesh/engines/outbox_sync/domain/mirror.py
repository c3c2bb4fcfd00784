"""The cloud mirror's rules: idempotent receipt, gapless cursors, latest-per-key heads.

Plain Python, no I/O: storage adapters read what a batch touches, call plan_push
and write the plan in one transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memmesh.errors import Conflict, FieldViolation, InvalidInput

OUTBOX_RECEIVED = "OUTBOX_RECEIVED"
RECEIVED_REASON = "DEVICE_PUSH"
RESTORE_SERVED = "OUTBOX_RESTORE_SERVED"
RESTORE_REASON = "DEVICE_RESTORE"


@dataclass(frozen=True)
class MirrorItem:
    """An encrypted continuity delta as a device sends it; the server never sees plaintext."""

    item_id: str
    item_kind: str
    logical_key: str
    version: int
    tombstone: bool
    ciphertext: bytes
    create_time_us: int

    def content_hash(self) -> bytes:
        """SHA-256 over every field the device chose, length-prefixed so fields cannot run together."""
        digest = hashlib.sha256()
        for part in (
            self.item_id.encode(),
            self.item_kind.encode(),
            self.logical_key.encode(),
            str(self.version).encode(),
            b"1" if self.tombstone else b"0",
            self.ciphertext,
            str(self.create_time_us).encode(),
        ):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
        return digest.digest()


@dataclass(frozen=True)
class StoredItem:
    """An item in the mirror with the cursor the server gave it."""

    cursor: int
    item: MirrorItem


@dataclass(frozen=True)
class Head:
    """The winning item of one (item_kind, logical_key): highest (version, cursor)."""

    item_kind: str
    logical_key: str
    version: int
    cursor: int


@dataclass(frozen=True)
class Ack:
    """What the device learns about one pushed item."""

    item_id: str
    cursor: int
    duplicate: bool


@dataclass(frozen=True)
class Receipt:
    """One accepted batch, to be recorded on the ledger (ids and counts, never payload)."""

    device_id: str
    first_cursor: int
    last_cursor: int
    item_count: int
    duplicate_count: int
    retry_count: int
    receive_time_us: int


@dataclass(frozen=True)
class PushBatch:
    """A device's push: who sent it, when (the request's now), its items."""

    device_id: str
    items: Sequence[MirrorItem]
    retry_count: int
    now_us: int


@dataclass(frozen=True)
class PushPlan:
    """What one push writes and answers."""

    inserts: list[StoredItem]
    heads: list[Head]
    acks: list[Ack]
    receipt: Receipt | None


def _wins(version: int, cursor: int, head: Head | None) -> bool:
    # seed 001 §2.6: no version regressions; equal versions go to the later arrival.
    return head is None or (version, cursor) > (head.version, head.cursor)


def plan_push(
    head_cursor: int,
    batch: PushBatch,
    existing: Mapping[str, tuple[int, bytes]],
    heads: Mapping[tuple[str, str], Head],
) -> PushPlan:
    """Cursors, acks, head moves and the receipt of a batch.

    existing maps a stored item id to (cursor, content hash); heads holds the
    current head of every (kind, key) in the batch. Raises Conflict when an id is
    stored with other content, InvalidInput when the batch repeats an id with other content.
    """
    inserts: list[StoredItem] = []
    acks: list[Ack] = []
    seen: dict[str, tuple[int, bytes, int]] = {}
    moved: dict[tuple[str, str], Head] = {}
    cursor = head_cursor
    for index, item in enumerate(batch.items):
        content = item.content_hash()
        if item.item_id in seen:
            first_cursor, first_content, first_index = seen[item.item_id]
            if first_content != content:
                raise InvalidInput(
                    [
                        FieldViolation(
                            f"items[{index}].item_id",
                            f"repeats items[{first_index}] with other content",
                        )
                    ]
                )
            acks.append(Ack(item.item_id, first_cursor, duplicate=True))
            continue
        if item.item_id in existing:
            stored_cursor, stored_content = existing[item.item_id]
            if stored_content != content:
                raise Conflict(
                    f"item {item.item_id!r} is stored with other content",
                    reason="OUTBOX_ITEM_CONFLICT",
                )
            seen[item.item_id] = (stored_cursor, content, index)
            acks.append(Ack(item.item_id, stored_cursor, duplicate=True))
            continue
        cursor += 1
        seen[item.item_id] = (cursor, content, index)
        inserts.append(StoredItem(cursor, item))
        acks.append(Ack(item.item_id, cursor, duplicate=False))
        key = (item.item_kind, item.logical_key)
        current = moved.get(key, heads.get(key))
        if _wins(item.version, cursor, current):
            moved[key] = Head(item.item_kind, item.logical_key, item.version, cursor)
    receipt = None
    if inserts:
        receipt = Receipt(
            device_id=batch.device_id,
            first_cursor=inserts[0].cursor,
            last_cursor=inserts[-1].cursor,
            item_count=len(inserts),
            duplicate_count=len(acks) - len(inserts),
            retry_count=batch.retry_count,
            receive_time_us=batch.now_us,
        )
    return PushPlan(inserts, sorted(moved.values(), key=lambda h: h.cursor), acks, receipt)


def item_size(stored: StoredItem) -> int:
    """Approximate wire size of an item, for bounding responses below the message cap."""
    item = stored.item
    return (
        len(item.ciphertext) + len(item.item_id) + len(item.item_kind) + len(item.logical_key) + 48
    )


def within_bytes(items: Sequence[StoredItem], max_bytes: int) -> list[StoredItem]:
    """The longest prefix whose size stays within max_bytes; never empty when items is not."""
    taken: list[StoredItem] = []
    total = 0
    for stored in items:
        total += item_size(stored)
        if taken and total > max_bytes:
            break
        taken.append(stored)
    return taken


# A tombstone the server writes itself when the user forgets: no device wrote it, so it
# carries no ciphertext; devices that pull it delete their copy, a restore returns it.
FORGET_ITEM_PREFIX = "forget-"


@dataclass(frozen=True)
class ForgetPlan:
    """What a forget writes: one tombstone per forgotten artifact, each its new head."""

    inserts: list[StoredItem]
    heads: list[Head]


def plan_forget(
    head_cursor: int,
    targets: Sequence[tuple[str, str]],
    heads: Mapping[tuple[str, str], Head],
    now_us: int,
) -> ForgetPlan:
    """A tombstone above the current head of every (item_kind, logical_key) forgotten, so
    every device (pull) and every new device (restore) learns the artifact is gone and no
    lower version can ever win again. The ids are derived, so a repeat writes nothing new."""
    inserts: list[StoredItem] = []
    moved: list[Head] = []
    cursor = head_cursor
    for kind, key in sorted(set(targets)):
        head = heads.get((kind, key))
        version = (head.version if head else 0) + 1
        cursor += 1
        item_id = (
            FORGET_ITEM_PREFIX
            + hashlib.sha256(f"{kind}\x1f{key}\x1f{version}".encode()).hexdigest()[:40]
        )
        item = MirrorItem(item_id, kind, key, version, True, b"", now_us)
        inserts.append(StoredItem(cursor, item))
        moved.append(Head(kind, key, version, cursor))
    return ForgetPlan(inserts, moved)
