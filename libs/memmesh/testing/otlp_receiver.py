"""A real OTLP/gRPC trace receiver on loopback that keeps what it is sent, for tests."""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc
from opentelemetry.proto.collector.metrics.v1 import (
    metrics_service_pb2,
    metrics_service_pb2_grpc,
)
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    attributes: dict[str, str]


@dataclass
class OtlpReceiver(trace_service_pb2_grpc.TraceServiceServicer):
    spans: list[ReceivedSpan] = field(default_factory=list)
    server: grpc.aio.Server | None = None
    port: int = 0

    async def Export(self, request, context):  # type: ignore[no-untyped-def]  # noqa: N802
        for resource_spans in request.resource_spans:
            service = next(
                (
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                ),
                "",
            )
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: _text(a.value) for a in span.attributes}
                    self.spans.append(
                        ReceivedSpan(service, span.name, span.trace_id.hex(), attributes)
                    )
        return trace_service_pb2.ExportTraceServiceResponse()

    async def start(self) -> str:
        """Listen on a free loopback port; returns the endpoint URL for MEMMESH_OTLP_ENDPOINT."""
        self.server = grpc.aio.server()
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self.server)
        # Engines export metrics to the same endpoint: taken and dropped here.
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(_DropMetrics(), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop(None)


class _DropMetrics(metrics_service_pb2_grpc.MetricsServiceServicer):
    async def Export(self, request, context):  # type: ignore[no-untyped-def]  # noqa: N802
        return metrics_service_pb2.ExportMetricsServiceResponse()


def _text(value) -> str:  # type: ignore[no-untyped-def]
    kind = value.WhichOneof("value")
    return str(getattr(value, kind)) if kind else ""
