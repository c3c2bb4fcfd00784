"""What the gateway tells an operator about each Brief and Ingest: attributes on the RPC's
span and the gateway's metrics. Outcomes, reason codes, time, counts and sizes only: never
a word of the conversation, never a raw user id (the tenant id is kept).

The bundle's size is the BundleCounters' context_bundle_bytes the composer (or the final
gate's recount) already measured: nothing is serialized again to observe it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from memmesh.engines.gateway.outcomes import TIER2_DEGRADED
from memmesh.errors import DomainError
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.metrics import BRIEF_COUNTER_FIELDS, Instruments, instruments, metrics_enabled
from memmesh.runtime.telemetry import ATTR_TENANT, tracing_enabled

OK = "ok"
DEGRADED = "degraded"
FAILED_CLOSED = "failed_closed"
# The call ended with an error status (a refused request, an archive that failed).
ERROR = "error"
# An Ingest acknowledged with its extraction still queued for the outbox's drainer.
EXTRACTION_QUEUED = "EXTRACTION_QUEUED"

ATTR_OUTCOME = "memmesh.outcome"
ATTR_REASON = "memmesh.reason_code"
ATTR_BUDGET_LEFT = "memmesh.budget_left_ms"
ATTR_DEGRADED_PARTS = "memmesh.degraded_parts"
ATTR_BUNDLE_BYTES = "memmesh.bundle.bytes"
# Items in each part of the bundle and the hints: memmesh.bundle.<part>.count.
BUNDLE_PARTS = ("working_memory", "active_loops", "atoms", "excerpts", "digests", "entities")
HINT_PARTS = ("vocabulary", "corrections")


def brief_outcome(response: pb.BriefResponse) -> tuple[str, str]:
    """ok; degraded (Tier-2 parts left out, Tier-1 kept); or failed_closed (empty bundle)."""
    if not response.degraded:
        return OK, response.reason_code
    if response.reason_code == TIER2_DEGRADED:
        return DEGRADED, response.reason_code
    return FAILED_CLOSED, response.reason_code


def ingest_outcome(response: pb.IngestResponse) -> tuple[str, str]:
    """ok, or degraded when the turn is archived but its extraction waits in the outbox."""
    return (DEGRADED, EXTRACTION_QUEUED) if response.extraction_queued else (OK, "")


def brief_attributes(response: pb.BriefResponse) -> dict[str, AttributeValue]:
    """The bundle's counts and size, and the §2.12 counters, as span attributes."""
    bundle, counters = response.bundle, response.counters
    attributes: dict[str, AttributeValue] = {
        ATTR_BUNDLE_BYTES: counters.context_bundle_bytes,
        ATTR_DEGRADED_PARTS: list(response.degraded_parts),
    }
    for part in BUNDLE_PARTS:
        attributes[f"memmesh.bundle.{part}.count"] = len(getattr(bundle, part))
    for part in HINT_PARTS:
        attributes[f"memmesh.hints.{part}.count"] = len(getattr(response.hints, part))
    for field in BRIEF_COUNTER_FIELDS:
        attributes[f"memmesh.counters.{field}"] = getattr(counters, field)
    return attributes


class Observation:
    """One gateway call being observed: its clock and the budget it was given."""

    def __init__(
        self, rpc: str, tenant_id: str, budget_s: float, inbound_remaining_s: float | None
    ) -> None:
        self.rpc = rpc
        self.tenant_id = tenant_id
        self._started = time.perf_counter()
        self._budget_s = (
            budget_s if inbound_remaining_s is None else min(budget_s, inbound_remaining_s)
        )

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self._started) * 1000

    def budget_left_ms(self, elapsed_ms: float) -> float:
        return max(self._budget_s * 1000 - elapsed_ms, 0.0)


class GatewayObserver:
    """Puts outcomes on spans and records the gateway's metrics (each only when exported)."""

    def __init__(self, meters: Instruments | None = None) -> None:
        # Explicit instruments are always recorded (tests); the process's only when exported.
        self._meters = meters

    def _instruments(self) -> Instruments | None:
        if self._meters is not None:
            return self._meters
        return instruments() if metrics_enabled() else None

    def active(self) -> bool:
        """Whether spans or metrics are exported (nothing is computed otherwise)."""
        return tracing_enabled() or self._instruments() is not None

    @contextmanager
    def call(
        self, rpc: str, tenant_id: str, budget_s: float, inbound_remaining_s: float | None
    ) -> Iterator[Observation]:
        """Observe one call; an error it raises is recorded with its status as the reason."""
        watch = Observation(rpc, tenant_id, budget_s, inbound_remaining_s)
        try:
            yield watch
        except Exception as error:
            if self.active():
                status = error.status_name if isinstance(error, DomainError) else "INTERNAL"
                self._finish(watch, ERROR, status, dict)
            raise

    def brief(self, watch: Observation, response: pb.BriefResponse) -> pb.BriefResponse:
        """Record an answered Brief; returns it unchanged."""
        if not self.active():
            return response
        outcome, reason = brief_outcome(response)
        meters = self._finish(watch, outcome, reason, lambda: brief_attributes(response))
        if meters is not None:
            tenant = {ATTR_TENANT: watch.tenant_id}
            meters.bundle_size.record(response.counters.context_bundle_bytes, tenant)
            if response.degraded:
                meters.brief_degraded.add(1, {**tenant, ATTR_OUTCOME: outcome, ATTR_REASON: reason})
            # Zeros too: every counter's series exists from the first Brief on.
            for field, counter in meters.brief_counters.items():
                counter.add(getattr(response.counters, field), tenant)
        return response

    def ingest(self, watch: Observation, response: pb.IngestResponse) -> pb.IngestResponse:
        """Record an answered Ingest; returns it unchanged."""
        if not self.active():
            return response
        outcome, reason = ingest_outcome(response)
        self._finish(
            watch, outcome, reason, lambda: {"memmesh.ingest.duplicate": response.duplicate}
        )
        return response

    def _finish(
        self,
        watch: Observation,
        outcome: str,
        reason: str,
        attributes: Callable[[], dict[str, AttributeValue]],
    ) -> Instruments | None:
        """Set the span's attributes (made only when spans are exported) and record the
        call's duration and reason code."""
        elapsed_ms = watch.elapsed_ms()
        if tracing_enabled():
            span = trace.get_current_span()
            if span.is_recording():
                span.set_attributes(
                    {
                        ATTR_OUTCOME: outcome,
                        ATTR_REASON: reason,
                        ATTR_BUDGET_LEFT: round(watch.budget_left_ms(elapsed_ms), 3),
                        **attributes(),
                    }
                )
        meters = self._instruments()
        if meters is None:
            return None
        tenant = {ATTR_TENANT: watch.tenant_id}
        duration = meters.brief_duration if watch.rpc == "Brief" else meters.ingest_duration
        duration.record(elapsed_ms, {**tenant, ATTR_OUTCOME: outcome})
        if reason:
            meters.reason_codes.add(1, {**tenant, "rpc": watch.rpc, ATTR_REASON: reason})
        return meters
