"""Reason-coded ledger events of the mirror (seed 001 §2.10): ids, cursors and counts, never payload."""

from __future__ import annotations

import hashlib

from memmesh.engines.outbox_sync.domain.mirror import (
    OUTBOX_RECEIVED,
    RECEIVED_REASON,
    RESTORE_REASON,
    RESTORE_SERVED,
    Receipt,
)
from memmesh.ledger_event import NewEvent


def received_event(receipt: Receipt) -> NewEvent:
    """The event of an accepted batch; keyed by its first cursor, unique per user."""
    return NewEvent(
        idempotency_key=f"outbox-received:{receipt.first_cursor}",
        event_type=OUTBOX_RECEIVED,
        reason_code=RECEIVED_REASON,
        attributes=(
            ("device_id", receipt.device_id),
            ("duplicate_count", receipt.duplicate_count),
            ("first_cursor", receipt.first_cursor),
            ("item_count", receipt.item_count),
            ("last_cursor", receipt.last_cursor),
            ("retry_count", receipt.retry_count),
        ),
        occur_time_us=receipt.receive_time_us,
    )


def restore_event(device_id: str, as_of_cursor: int, now_us: int) -> NewEvent:
    """The event of a restore served; a retried first page maps to the same key."""
    digest = hashlib.sha256(f"{device_id}\x1f{as_of_cursor}\x1f{now_us}".encode()).hexdigest()[:40]
    return NewEvent(
        idempotency_key=f"outbox-restore:{digest}",
        event_type=RESTORE_SERVED,
        reason_code=RESTORE_REASON,
        attributes=(("as_of_cursor", as_of_cursor), ("device_id", device_id)),
        occur_time_us=now_us,
    )
