"""A real OTLP/gRPC collector on loopback for tests: it answers the trace and the metrics
Export RPCs, keeps every request's bytes as they came over the wire, and decodes the spans
(attributes and links) and the metric points it was sent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
METRICS_SERVICE = "opentelemetry.proto.collector.metrics.v1.MetricsService"


@dataclass(frozen=True)
class CollectedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    attributes: dict[str, object]
    # (trace id, span id) of each linked span, hex.
    links: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CollectedPoint:
    """One data point: a sum's or gauge's value, or a histogram's count."""

    service: str
    metric: str
    kind: str
    attributes: dict[str, object]
    value: float


@dataclass
class OtlpCollector:
    # Every export request as received, of each kind (what a scan for leaked words reads).
    span_exports: list[bytes] = field(default_factory=list)
    metric_exports: list[bytes] = field(default_factory=list)
    spans: list[CollectedSpan] = field(default_factory=list)
    points: list[CollectedPoint] = field(default_factory=list)
    server: grpc.aio.Server | None = None

    async def start(self, credentials: grpc.ServerCredentials | None = None) -> str:
        """Listen on a free loopback port (TLS with `credentials`); returns the endpoint."""
        self.server = grpc.aio.server()
        self.server.add_generic_rpc_handlers(
            (
                _export(TRACE_SERVICE, self._traces, trace_service_pb2.ExportTraceServiceResponse),
                _export(
                    METRICS_SERVICE, self._metrics, metrics_service_pb2.ExportMetricsServiceResponse
                ),
            )
        )
        if credentials is None:
            port = self.server.add_insecure_port("127.0.0.1:0")
        else:
            port = self.server.add_secure_port("127.0.0.1:0", credentials)
        await self.server.start()
        return f"{'https' if credentials else 'http'}://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop(None)

    @property
    def raw(self) -> list[bytes]:
        """Every export request received, spans' then metrics'."""
        return [*self.span_exports, *self.metric_exports]

    def metric(self, name: str) -> list[CollectedPoint]:
        """Every point received of one metric."""
        return [point for point in self.points if point.metric == name]

    def _traces(self, data: bytes) -> None:
        self.span_exports.append(data)
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(data)
        for resource_spans in request.resource_spans:
            service = _service(resource_spans.resource)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        CollectedSpan(
                            service,
                            span.name,
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            _attributes(span.attributes),
                            tuple((link.trace_id.hex(), link.span_id.hex()) for link in span.links),
                        )
                    )

    def _metrics(self, data: bytes) -> None:
        self.metric_exports.append(data)
        request = metrics_service_pb2.ExportMetricsServiceRequest.FromString(data)
        for resource_metrics in request.resource_metrics:
            service = _service(resource_metrics.resource)
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    kind = metric.WhichOneof("data") or ""
                    for point in getattr(metric, kind).data_points:
                        value = (
                            point.count
                            if kind == "histogram"
                            else getattr(point, point.WhichOneof("value") or "as_int")
                        )
                        self.points.append(
                            CollectedPoint(
                                service, metric.name, kind, _attributes(point.attributes), value
                            )
                        )


def _export(service: str, keep: Callable[[bytes], None], response: Any) -> grpc.GenericRpcHandler:
    async def export(data: bytes, context: grpc.aio.ServicerContext) -> Any:
        keep(data)
        return response()

    handler = grpc.unary_unary_rpc_method_handler(
        export,
        request_deserializer=lambda data: data,  # the wire bytes, kept before decoding
        response_serializer=lambda message: message.SerializeToString(),
    )
    return grpc.method_handlers_generic_handler(service, {"Export": handler})


def _service(resource: Resource) -> str:
    return str(_attributes(resource.attributes).get("service.name", ""))


def _attributes(attributes: Any) -> dict[str, object]:
    return {kv.key: _value(kv.value) for kv in attributes if isinstance(kv, KeyValue)}


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None
