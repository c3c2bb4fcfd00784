"""OpenTelemetry wiring: one tracer provider per process, OTLP export when configured."""

from __future__ import annotations

import hashlib

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

ATTR_TENANT = "memmesh.tenant_id"
ATTR_USER = "memmesh.user_pseudonym"


def setup_tracing(service_name: str, otlp_endpoint: str | None) -> TracerProvider | None:
    """Install a tracer provider exporting over OTLP/gRPC; without an endpoint, do nothing."""
    if not otlp_endpoint:
        return None
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    exporter: SpanExporter = OTLPSpanExporter(endpoint=otlp_endpoint, insecure=True)
    provider = TracerProvider(resource=Resource.create({"service.name": f"memmesh.{service_name}"}))
    # Short delay so a turn's spans reach the collector quickly; batching keeps the RPC path free.
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=200))
    trace.set_tracer_provider(provider)
    return provider


def tracing_enabled() -> bool:
    """True once setup_tracing installed an exporting provider in this process."""
    return isinstance(trace.get_tracer_provider(), TracerProvider)


def user_pseudonym(tenant_id: str, user_id: str) -> str:
    """A stable pseudonym of a user for spans and logs; the raw id never leaves."""
    digest = hashlib.sha256(f"{tenant_id}\x1f{user_id}".encode()).hexdigest()
    return digest[:16]


def current_trace_id() -> str:
    """Hex trace id of the current span, or '-' outside a trace."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else "-"


def annotate_scope(tenant_id: str, user_id: str) -> None:
    """Put the tenant and the user's pseudonym on the current span."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute(ATTR_TENANT, tenant_id)
        span.set_attribute(ATTR_USER, user_pseudonym(tenant_id, user_id))
