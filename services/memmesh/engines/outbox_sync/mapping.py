"""The only place that knows both the mirror's proto and domain types."""

from __future__ import annotations

from memmesh.engines.outbox_sync.domain.mirror import Ack, MirrorItem, PushBatch, StoredItem
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.runtime.timeconv import micros_of, timestamp_of


def push_batch(request: pb.PushRequest) -> PushBatch:
    """The domain batch of a push request (cursors the device sent are ignored)."""
    items = [
        MirrorItem(
            item_id=item.item_id,
            item_kind=item.item_kind,
            logical_key=item.logical_key,
            version=item.version,
            tombstone=item.tombstone,
            ciphertext=item.ciphertext,
            create_time_us=micros_of(item.create_time),
        )
        for item in request.items
    ]
    return PushBatch(request.device_id, items, request.retry_count, micros_of(request.now))


def ack_message(ack: Ack) -> pb.PushAck:
    return pb.PushAck(item_id=ack.item_id, cursor=ack.cursor, duplicate=ack.duplicate)


def item_message(stored: StoredItem) -> pb.OutboxItem:
    """A stored item as the API returns it."""
    item = stored.item
    return pb.OutboxItem(
        item_id=item.item_id,
        item_kind=item.item_kind,
        ciphertext=item.ciphertext,
        create_time=timestamp_of(item.create_time_us),
        cursor=stored.cursor,
        logical_key=item.logical_key,
        version=item.version,
        tombstone=item.tombstone,
    )
