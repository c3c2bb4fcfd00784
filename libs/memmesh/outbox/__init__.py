"""A durable per-user effect outbox with a background drainer.

An engine acknowledges a write once it is stored, and queues what must follow (index,
ledger, extraction, a peer's update) as effects in its own database. The drainer delivers
them through a handler per kind, in order per (tenant, user, lane), retrying with backoff;
an effect that cannot succeed moves to the dead letters and never blocks those behind it.

    outbox = Outbox(database, {"index_turn": index_turn}, RetryPolicy(max_attempts=50))
    outbox.start()                                        # in the engine's main.py
    await outbox.enqueue(tenant, user, [Effect("index_turn", payload, f"index:{turn_id}", lane="ranker")])
    delivery = await outbox.enqueue_and_deliver(tenant, user, effects, timeout_s=0.5)
    await outbox.stop()

The tables come from `outbox_migration(dialect, version)` and `outbox_trace_migration()` in
the engine's migrations.
"""

from memmesh.outbox.drainer import (
    ATTEMPTS_EXHAUSTED,
    NO_HANDLER,
    REFUSED,
    Delivery,
    Handler,
    Outbox,
    wall_clock_us,
)
from memmesh.outbox.effects import (
    DeadEffect,
    Done,
    Effect,
    EffectRejected,
    QueuedEffect,
    RetryPolicy,
    StoredEffect,
)
from memmesh.outbox.queue import (
    Claim,
    EffectQueue,
    PurgeFilter,
    enqueue_in,
    outbox_lock,
    outbox_migration,
    outbox_trace_migration,
    purge_in,
)

__all__ = [
    "ATTEMPTS_EXHAUSTED",
    "NO_HANDLER",
    "REFUSED",
    "Claim",
    "DeadEffect",
    "Delivery",
    "Done",
    "Effect",
    "EffectQueue",
    "EffectRejected",
    "Handler",
    "Outbox",
    "PurgeFilter",
    "QueuedEffect",
    "RetryPolicy",
    "StoredEffect",
    "enqueue_in",
    "outbox_lock",
    "outbox_migration",
    "outbox_trace_migration",
    "purge_in",
    "wall_clock_us",
]
