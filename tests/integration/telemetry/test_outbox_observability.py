"""The outbox keeps the W3C traceparent of the call that queued each effect (and hands it
to the effects that follow up on it), and counts deliveries, dead letters and its depth."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from memmesh.outbox import (
    Done,
    Effect,
    EffectRejected,
    Outbox,
    QueuedEffect,
    RetryPolicy,
    outbox_migration,
    outbox_trace_migration,
)
from memmesh.runtime.metrics import (
    OUTBOX_DEAD_LETTERS,
    OUTBOX_DELIVERIES,
    OUTBOX_DEPTH,
    Instruments,
)
from memmesh.runtime.telemetry import link_to
from memmesh.storage.sql import Database, Dialect, SqliteDatabase

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7
TRACEPARENT = f"00-{TRACE_ID:032x}-{SPAN_ID:016x}-01"
FAST = RetryPolicy(attempt_timeout_s=0.5, initial_backoff_s=0.01, max_attempts=2)


@pytest_asyncio.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    db = SqliteDatabase.open(
        tmp_path / "engine.sqlite3", [outbox_migration(Dialect.SQLITE, 1), outbox_trace_migration()]
    )
    yield db
    await db.close()


def turn_span() -> NonRecordingSpan:
    """The span of a traced call (the sampled context is all the outbox reads)."""
    return NonRecordingSpan(SpanContext(TRACE_ID, SPAN_ID, False, TraceFlags(1)))


async def test_an_effect_keeps_the_traceparent_of_the_call_that_queued_it(
    database: Database,
) -> None:
    outbox = Outbox(database, {})
    with trace.use_span(turn_span()):
        await outbox.enqueue("t", "u", [Effect("k", b"p", "traced")])
    await outbox.enqueue("t", "u", [Effect("k", b"p", "untraced")])
    stored = {effect.key: effect.trace_parent for effect in await outbox.pending("t", "u")}
    assert stored == {"traced": TRACEPARENT, "untraced": ""}
    link = link_to(stored["traced"])
    assert link is not None
    assert (link.context.trace_id, link.context.span_id) == (TRACE_ID, SPAN_ID)
    assert link_to("") is None and link_to("not-a-traceparent") is None


async def test_a_follow_up_delivered_later_keeps_the_traceparent_of_the_effect_it_follows(
    database: Database,
) -> None:
    seen: dict[str, str] = {}

    async def first(effect: QueuedEffect, timeout_s: float) -> object:
        seen[effect.key] = effect.trace_parent
        return Done(then=(Effect("second", b"p", "follow-up", "other"),))

    async def second(effect: QueuedEffect, timeout_s: float) -> object:
        seen[effect.key] = effect.trace_parent
        return None

    outbox = Outbox(database, {"first": first, "second": second})
    with trace.use_span(turn_span()):
        await outbox.enqueue("t", "u", [Effect("first", b"p", "origin")])
    # The drainer runs outside any trace: what it delivers still names the turn.
    await outbox.run_once()
    await outbox.run_once()
    assert seen == {"origin": TRACEPARENT, "follow-up": TRACEPARENT}


async def test_deliveries_dead_letters_and_depth_are_metrics(database: Database) -> None:
    reader = InMemoryMetricReader()
    meters = Instruments(MeterProvider(metric_readers=[reader]).get_meter("test"))

    async def refuse(effect: QueuedEffect, timeout_s: float) -> object:
        raise EffectRejected("cannot decode")

    async def accept(effect: QueuedEffect, timeout_s: float) -> object:
        return None

    outbox = Outbox(database, {"bad": refuse, "good": accept}, FAST, meters=meters)
    await outbox.enqueue("t", "u", [Effect("good", b"p", "a", "one"), Effect("bad", b"p", "b")])
    await outbox.enqueue("t", "u", [Effect("good", b"p", "c", "two")])
    await outbox.report_depth()
    assert points(reader, OUTBOX_DEPTH) == {(("state", "pending"),): 3, (("state", "dead"),): 0}
    await outbox.run_once()
    await outbox.report_depth()
    assert points(reader, OUTBOX_DELIVERIES) == {
        (("kind", "good"), ("outcome", "delivered")): 2,
        (("kind", "bad"), ("outcome", "failed")): 1,
    }
    assert points(reader, OUTBOX_DEAD_LETTERS) == {(("kind", "bad"), ("reason", "REFUSED")): 1}
    assert points(reader, OUTBOX_DEPTH) == {(("state", "pending"),): 0, (("state", "dead"),): 1}
    await outbox.stop()
    assert points(reader, OUTBOX_DEPTH) == {}


def points(reader: InMemoryMetricReader, name: str) -> dict[tuple[tuple[str, object], ...], float]:
    """The latest value of each series of one metric, by its sorted attributes."""
    data = reader.get_metrics_data()
    found: dict[tuple[tuple[str, object], ...], float] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        key = tuple(sorted((point.attributes or {}).items()))
                        found[key] = point.value  # type: ignore[union-attr]
    return found
