"""OpenTelemetry metrics of the mesh, exported over OTLP beside the spans when configured.

Every instrument is made here, once per process (`instruments()`), so the names a dashboard
may query are the ones in `Instruments.catalogue`. Attributes are bounded words: an RPC
method, a status or outcome, a reason code, an effect kind, an engine name, the tenant id.
Never conversation text, never a raw user id.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Counter, Histogram, Meter, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader

from memmesh.common.v1 import bundle_pb2
from memmesh.runtime.telemetry import OtlpTarget, service_resource

METER_NAME = "memmesh"
# Milliseconds around the Brief budget (40 ms by default) and up to an Ingest's seconds.
LATENCY_BUCKETS_MS = (1, 2, 5, 10, 20, 30, 40, 60, 80, 100, 150, 250, 500, 1000, 2500, 5000)
# Bytes up to and past the 32 KB bundle cap (DESIGN.md).
BUNDLE_BUCKETS_BYTES = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)

RPC_DURATION = "memmesh.rpc.server.duration"
BRIEF_DURATION = "memmesh.gateway.brief.duration"
INGEST_DURATION = "memmesh.gateway.ingest.duration"
BRIEF_DEGRADED = "memmesh.gateway.brief.degraded"
REASON_CODES = "memmesh.gateway.reason_codes"
BUNDLE_SIZE = "memmesh.brief.bundle.size"
OUTBOX_DEPTH = "memmesh.outbox.depth"
OUTBOX_DELIVERIES = "memmesh.outbox.deliveries"
OUTBOX_DEAD_LETTERS = "memmesh.outbox.dead_letters"
ENGINE_RESTARTS = "memmesh.supervisor.engine_restarts"
# seed 001 §2.12: the per-turn measurement counters (all but the bundle's bytes, a histogram),
# one counter each, named after the BundleCounters field: memmesh.brief.<field>.
BRIEF_COUNTER_FIELDS = tuple(
    field.name
    for field in bundle_pb2.BundleCounters.DESCRIPTOR.fields
    if field.name != "context_bundle_bytes"
)


def brief_counter_name(field: str) -> str:
    """The metric of one §2.12 counter: memmesh.brief.atoms_selected, ..."""
    return f"memmesh.brief.{field.removesuffix('_count')}"


@dataclass(frozen=True)
class InstrumentInfo:
    """What a dashboard needs to know of an instrument to name its series."""

    name: str
    kind: str  # "counter", "histogram" or "gauge"
    unit: str


class TalliedCounter:
    """A monotonic counter summed in this process and read by the SDK at each export (an
    observable counter): on the Brief path an add is a dict update, not the SDK's
    per-call aggregation (about 8 us each)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals: dict[tuple[tuple[str, str], ...], float] = {}

    def add(self, amount: float, attributes: Mapping[str, str]) -> None:
        key = tuple(attributes.items())
        with self._lock:
            self._totals[key] = self._totals.get(key, 0) + amount

    def observe(self, options: CallbackOptions) -> Iterable[Observation]:
        with self._lock:
            return [Observation(total, dict(key)) for key, total in self._totals.items()]


class Instruments:
    """Every instrument of the mesh, made from one meter."""

    def __init__(self, meter: Meter) -> None:
        self.catalogue: list[InstrumentInfo] = []
        self._meter = meter
        self.rpc_duration = self._histogram(
            RPC_DURATION, "ms", "Server time of an RPC", LATENCY_BUCKETS_MS
        )
        self.brief_duration = self._histogram(
            BRIEF_DURATION, "ms", "Gateway Brief latency, by outcome", LATENCY_BUCKETS_MS
        )
        self.ingest_duration = self._histogram(
            INGEST_DURATION, "ms", "Gateway Ingest latency, by outcome", LATENCY_BUCKETS_MS
        )
        self.brief_degraded = self._counter(
            BRIEF_DEGRADED, "{brief}", "Briefs answered degraded or failed closed"
        )
        self.reason_codes = self._counter(
            REASON_CODES, "{answer}", "Gateway answers carrying a reason code, by code"
        )
        self.bundle_size = self._histogram(
            BUNDLE_SIZE, "By", "Serialized size of each Brief's bundle", BUNDLE_BUCKETS_BYTES
        )
        self.brief_counters: Mapping[str, TalliedCounter] = {
            field: self._tallied(brief_counter_name(field), "{item}", f"seed 001 §2.12 {field}")
            for field in BRIEF_COUNTER_FIELDS
        }
        self.outbox_deliveries = self._counter(
            OUTBOX_DELIVERIES, "{attempt}", "Outbox delivery attempts, by kind and outcome"
        )
        self.outbox_dead_letters = self._counter(
            OUTBOX_DEAD_LETTERS, "{effect}", "Effects moved to the dead letters"
        )
        self.engine_restarts = self._counter(
            ENGINE_RESTARTS, "{restart}", "Engines the supervisor restarted"
        )
        self._depth_lock = threading.Lock()
        self._depths: dict[int, tuple[int, int]] = {}
        self._gauge(OUTBOX_DEPTH, "{effect}", "Effects queued (pending) and dead", self._observe)

    def set_outbox_depth(self, owner: object, pending: int, dead: int) -> None:
        """The latest depth of one outbox (the gauge reports the sum of this process's)."""
        with self._depth_lock:
            self._depths[id(owner)] = (pending, dead)

    def drop_outbox(self, owner: object) -> None:
        """An outbox that stopped no longer counts."""
        with self._depth_lock:
            self._depths.pop(id(owner), None)

    def _observe(self, options: CallbackOptions) -> Iterable[Observation]:
        with self._depth_lock:
            if not self._depths:
                return []
            pending = sum(p for p, _ in self._depths.values())
            dead = sum(d for _, d in self._depths.values())
        return [Observation(pending, {"state": "pending"}), Observation(dead, {"state": "dead"})]

    def _counter(self, name: str, unit: str, description: str) -> Counter:
        self.catalogue.append(InstrumentInfo(name, "counter", unit))
        return self._meter.create_counter(name, unit, description)

    def _tallied(self, name: str, unit: str, description: str) -> TalliedCounter:
        self.catalogue.append(InstrumentInfo(name, "counter", unit))
        tally = TalliedCounter()
        self._meter.create_observable_counter(name, [tally.observe], unit, description)
        return tally

    def _histogram(
        self, name: str, unit: str, description: str, buckets: tuple[float, ...]
    ) -> Histogram:
        self.catalogue.append(InstrumentInfo(name, "histogram", unit))
        return self._meter.create_histogram(
            name, unit, description, explicit_bucket_boundaries_advisory=buckets
        )

    def _gauge(
        self,
        name: str,
        unit: str,
        description: str,
        callback: Callable[[CallbackOptions], Iterable[Observation]],
    ) -> None:
        self.catalogue.append(InstrumentInfo(name, "gauge", unit))
        self._meter.create_observable_gauge(name, [callback], unit, description)


@functools.cache
def instruments() -> Instruments:
    """This process's instruments (they forward to the meter provider once one is set)."""
    return Instruments(metrics.get_meter(METER_NAME))


def metrics_enabled() -> bool:
    """True once setup_metrics installed an exporting provider in this process."""
    return isinstance(metrics.get_meter_provider(), MeterProvider)


def setup_metrics(
    service_name: str, target: OtlpTarget | None, interval_ms: int
) -> MeterProvider | None:
    """Install a meter provider exporting over OTLP/gRPC every `interval_ms`; without an
    endpoint, do nothing (instruments stay no-ops)."""
    if target is None or not target.endpoint:
        return None
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

    exporter: MetricExporter = OTLPMetricExporter(**target.exporter_options())
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=interval_ms)
    provider = MeterProvider(resource=service_resource(service_name), metric_readers=[reader])
    metrics.set_meter_provider(provider)
    return provider
