"""Observability through real engine processes: with MEMMESH_OTLP_ENDPOINT set, the mesh
exports the gateway's metrics (Brief and Ingest latency by outcome, degraded Briefs, reason
codes, bundle size, the seed 001 §2.12 counters), the outbox's and every RPC's, and spans whose
Brief and Ingest carry outcome, reason code, budget left and bundle counts. An index update
the ThreadStore's drainer delivers after the ranker is back is its own trace, linked to the
Ingest that queued it. No exported byte holds a word of the conversation or the raw user id."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc

from memmesh.client.requests import brief_request, ingest_request, user_scope
from memmesh.engines.gateway.observe import (
    ATTR_BUDGET_LEFT,
    ATTR_BUNDLE_BYTES,
    ATTR_DEGRADED_PARTS,
    ATTR_OUTCOME,
    ATTR_REASON,
)
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from memmesh.outbox.observe import ATTR_OUTCOME as ATTR_DELIVERY
from memmesh.outbox.observe import SPAN_NAME as DELIVER
from memmesh.runtime.metrics import (
    BRIEF_COUNTER_FIELDS,
    BRIEF_DEGRADED,
    BRIEF_DURATION,
    BUNDLE_SIZE,
    INGEST_DURATION,
    OUTBOX_DEAD_LETTERS,
    OUTBOX_DELIVERIES,
    OUTBOX_DEPTH,
    REASON_CODES,
    RPC_DURATION,
    brief_counter_name,
)
from memmesh.runtime.supervisor import Mesh
from memmesh.testing.otlp_collector import OtlpCollector

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
    "context_composer",
    "gateway",
]
TENANT, KEY = "obs-tenant", "obs-key"
START_US = 1_767_225_600_000_000
MINUTE_US = 60_000_000
FIRST = "My sister Philippa lives in Reykjavik"
SECOND = "My brother Thaddeus studies oboe in Tallinn"


def traceparent() -> tuple[str, list[tuple[str, str]]]:
    """A fresh trace id, and the metadata that makes a gateway call part of that trace."""
    trace_id, span_id = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    return trace_id, [("traceparent", f"00-{trace_id}-{span_id}-01")]


async def until(done: Callable[[], bool], timeout_s: float = 30.0) -> None:
    for _ in range(int(timeout_s / 0.1)):
        if done():
            return
        await asyncio.sleep(0.1)


async def test_metrics_and_span_outcomes_arrive_and_carry_no_conversation_text(
    tmp_path: Path,
) -> None:
    collector = OtlpCollector()
    endpoint = await collector.start()
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path),
        "MEMMESH_OTLP_ENDPOINT": endpoint,
        "MEMMESH_OTLP_METRIC_INTERVAL_MS": "200",
        "MEMMESH_LOG_LEVEL": "WARNING",
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{KEY}"}}',
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "3000",
        "MEMMESH_THREAD_STORE_INDEX_RETRY_MAX_S": "0.3",
        # The extractor gives up at once on an index update the ranker cannot take: a dead letter.
        "MEMMESH_ATOM_EXTRACTOR_EFFECT_MAX_ATTEMPTS": "1",
    }
    user = f"obs-user-{uuid.uuid4().hex[:8]}"
    scope = user_scope(TENANT, user)
    auth = [("authorization", f"Bearer {KEY}")]
    traces: dict[str, str] = {}
    mesh = Mesh(list(ENGINES), env=env)
    await asyncio.to_thread(mesh.__enter__)
    try:
        async with grpc.aio.insecure_channel(mesh.addrs["gateway"]) as channel:
            gateway = pb_grpc.GatewayServiceStub(channel)

            async def call(name: str, method: str, request: object) -> object:
                traces[name], metadata = traceparent()
                return await getattr(gateway, method)(request, metadata=auth + metadata, timeout=10)

            await call(
                "ingest", "Ingest", ingest_request(scope, "s1", "t1", "user", FIRST, START_US)
            )
            at = START_US + MINUTE_US
            ok = await call(
                "brief_ok", "Brief", brief_request(scope, "s1", at, "where does my sister live")
            )
            closed = await call(
                "brief_closed",
                "Brief",
                brief_request(scope, "s1", at, "and my sister?", identity_verified=False),
            )
            await asyncio.to_thread(mesh.kill, "retrieval_ranker")
            await call(
                "ingest_queued",
                "Ingest",
                ingest_request(scope, "s1", "t2", "user", SECOND, at + MINUTE_US),
            )
            degraded = await call(
                "brief_degraded",
                "Brief",
                brief_request(scope, "s1", at + 2 * MINUTE_US, "what does my brother study"),
            )
            await asyncio.to_thread(mesh.start, ["retrieval_ranker"])

            def delivered_later() -> bool:
                return any(
                    s.name == DELIVER
                    and s.service == "memmesh.thread_store"
                    and s.attributes.get(ATTR_DELIVERY) == "delivered"
                    and any(link[0] == traces["ingest_queued"] for link in s.links)
                    for s in collector.spans
                )

            await until(delivered_later)
            await until(lambda: bool(collector.metric(OUTBOX_DEAD_LETTERS)))
    finally:
        await asyncio.to_thread(mesh.stop)  # each engine flushes its spans and metrics
        await collector.stop()

    assert isinstance(ok, pb.BriefResponse) and not ok.degraded
    assert isinstance(closed, pb.BriefResponse) and closed.reason_code == "IDENTITY_UNVERIFIED"
    assert isinstance(degraded, pb.BriefResponse) and degraded.reason_code == "TIER2_DEGRADED"

    # Span outcomes on the gateway's Brief and Ingest spans, found by the trace each call opened.
    def gateway_span(name: str) -> dict[str, object]:
        (span,) = [
            s
            for s in collector.spans
            if s.service == "memmesh.gateway"
            and s.trace_id == traces[name]
            and s.name.startswith("/memmesh.gateway.v1.GatewayService/")
        ]
        return span.attributes

    ok_span = gateway_span("brief_ok")
    assert ok_span[ATTR_OUTCOME] == "ok" and ok_span[ATTR_REASON] == ""
    assert 0 < float(str(ok_span[ATTR_BUDGET_LEFT])) <= 3000
    assert ok_span[ATTR_BUNDLE_BYTES] == ok.counters.context_bundle_bytes > 0
    assert ok_span["memmesh.bundle.working_memory.count"] == len(ok.bundle.working_memory) >= 1
    assert ok_span["memmesh.bundle.atoms.count"] == len(ok.bundle.atoms)
    for field in BRIEF_COUNTER_FIELDS:
        assert ok_span[f"memmesh.counters.{field}"] == getattr(ok.counters, field)
    closed_span = gateway_span("brief_closed")
    assert (closed_span[ATTR_OUTCOME], closed_span[ATTR_REASON]) == (
        "failed_closed",
        "IDENTITY_UNVERIFIED",
    )
    degraded_span = gateway_span("brief_degraded")
    assert (degraded_span[ATTR_OUTCOME], degraded_span[ATTR_REASON]) == (
        "degraded",
        "TIER2_DEGRADED",
    )
    assert degraded_span[ATTR_DEGRADED_PARTS] == list(degraded.degraded_parts) != []
    assert gateway_span("ingest")[ATTR_OUTCOME] == "ok"
    assert gateway_span("ingest_queued")[ATTR_OUTCOME] in {"ok", "degraded"}

    # The late delivery is a trace of its own, linked to the Ingest that queued it.
    late = [
        s
        for s in collector.spans
        if s.name == DELIVER and any(link[0] == traces["ingest_queued"] for link in s.links)
    ]
    assert any(
        s.attributes.get(ATTR_DELIVERY) == "delivered" and s.trace_id != traces["ingest_queued"]
        for s in late
    ), late

    # Metrics, with the attributes an operator groups by.
    def series(name: str, key: str, service: str = "memmesh.gateway") -> set[object]:
        return {p.attributes.get(key) for p in collector.metric(name) if p.service == service}

    assert {"ok", "failed_closed", "degraded"} <= series(BRIEF_DURATION, ATTR_OUTCOME)
    assert "ok" in series(INGEST_DURATION, ATTR_OUTCOME)
    assert {"failed_closed", "degraded"} <= series(BRIEF_DEGRADED, ATTR_OUTCOME)
    assert {"IDENTITY_UNVERIFIED", "TIER2_DEGRADED"} <= series(REASON_CODES, ATTR_REASON)
    assert {TENANT} == series(BUNDLE_SIZE, "memmesh.tenant_id")
    for field in BRIEF_COUNTER_FIELDS:
        assert collector.metric(brief_counter_name(field)), field
    assert {"pending", "dead"} <= series(OUTBOX_DEPTH, "state", "memmesh.thread_store")
    assert {"failed", "delivered"} <= series(OUTBOX_DELIVERIES, "outcome", "memmesh.thread_store")
    assert "ATTEMPTS_EXHAUSTED" in series(OUTBOX_DEAD_LETTERS, "reason", "memmesh.atom_extractor")
    rpc_services = {p.service for p in collector.metric(RPC_DURATION)}
    assert {f"memmesh.{name}" for name in ENGINES} <= rpc_services

    # Nothing exported holds the conversation's words or the raw user id.
    words = {w.lower() for w in re.findall(r"[A-Za-z]{5,}", FIRST + " " + SECOND)} | {user}
    assert collector.raw
    leaked = {w for w in words for data in collector.raw if w.encode() in data.lower()}
    assert leaked == set()
