"""OpenTelemetry wiring: one tracer and one meter provider per process, OTLP export when
configured, and the W3C trace context a queued effect keeps of the turn that caused it."""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Link, SpanContext
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

ATTR_TENANT = "memmesh.tenant_id"
ATTR_USER = "memmesh.user_pseudonym"
_TRACEPARENT = "traceparent"


@dataclass(frozen=True)
class OtlpTarget:
    """Where and how a process exports: the collector endpoint, and its transport security.

    `insecure` None decides by the endpoint: plaintext for http://, TLS for https://, and
    without a scheme plaintext to loopback only (a collector beside the process). A CA file
    always means TLS, verified against that CA."""

    endpoint: str
    ca_file: Path | None = None
    insecure: bool | None = None

    @property
    def plaintext(self) -> bool:
        """Whether the exporter sends without TLS."""
        if self.ca_file is not None:
            return False
        if self.insecure is not None:
            return self.insecure
        parts = urlsplit(self.endpoint if "//" in self.endpoint else f"//{self.endpoint}")
        if parts.scheme in ("http", "https"):
            return parts.scheme == "http"
        return _loopback(parts.hostname or "")

    @property
    def host(self) -> str:
        """The collector's host name or address."""
        parts = urlsplit(self.endpoint if "//" in self.endpoint else f"//{self.endpoint}")
        return parts.hostname or ""

    @property
    def leaves_the_host_in_plaintext(self) -> bool:
        """Whether spans and metrics would cross a network unencrypted (a plaintext export
        to a collector that is not on loopback)."""
        return self.plaintext and not _loopback(self.host)

    def credentials(self) -> grpc.ChannelCredentials | None:
        """The channel credentials of a TLS export (system roots without a CA file)."""
        if self.plaintext:
            return None
        root = self.ca_file.read_bytes() if self.ca_file is not None else None
        return grpc.ssl_channel_credentials(root_certificates=root)

    def exporter_options(self) -> dict[str, Any]:
        """Endpoint and transport security as the OTLP/gRPC exporters take them."""
        return {
            "endpoint": self.endpoint,
            "insecure": self.plaintext,
            "credentials": self.credentials(),
        }


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def service_resource(service_name: str) -> Resource:
    """The resource every span and metric of this process carries."""
    return Resource.create({"service.name": f"memmesh.{service_name}"})


def span_exporter(target: OtlpTarget, timeout_s: float | None = None) -> SpanExporter:
    """The OTLP/gRPC span exporter to the target (`timeout_s`: per export, retries included)."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(**target.exporter_options(), timeout=timeout_s)


def setup_tracing(service_name: str, target: OtlpTarget | str | None) -> TracerProvider | None:
    """Install a tracer provider exporting over OTLP/gRPC; without an endpoint, do nothing."""
    if isinstance(target, str):
        target = OtlpTarget(target)
    if target is None or not target.endpoint:
        return None
    exporter = span_exporter(target)
    provider = TracerProvider(resource=service_resource(service_name))
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


def current_traceparent() -> str:
    """The W3C traceparent of the current span ('' outside a sampled trace), to store with
    work queued now so whoever does it later can link back to this turn."""
    if not trace.get_current_span().get_span_context().is_valid:
        return ""
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get(_TRACEPARENT, "")


def link_to(traceparent: str) -> Link | None:
    """A span link to the span a stored traceparent names; None when it names none."""
    if not traceparent:
        return None
    context = TraceContextTextMapPropagator().extract({_TRACEPARENT: traceparent})
    span_context: SpanContext = trace.get_current_span(context).get_span_context()
    return Link(span_context) if span_context.is_valid else None
