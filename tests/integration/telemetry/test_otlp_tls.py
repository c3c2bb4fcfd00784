"""OTLP export over TLS: with the collector's CA configured spans arrive over TLS; without it
the collector's certificate is refused and nothing arrives. Plaintext stays the default for
http:// and loopback collectors only."""

from __future__ import annotations

import asyncio
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from memmesh.runtime import tls
from memmesh.runtime.telemetry import OtlpTarget, span_exporter
from memmesh.testing.otlp_collector import OtlpCollector


async def export_one_span(target: OtlpTarget, name: str) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(span_exporter(target, timeout_s=2.0)))
    # The exporter's channel is synchronous: it runs beside the collector's event loop.
    await asyncio.to_thread(lambda: provider.get_tracer("test").start_span(name).end())
    await asyncio.to_thread(provider.shutdown)


async def test_spans_reach_a_tls_collector_only_with_its_ca(tmp_path: Path) -> None:
    tls.make_certificates(tmp_path, ["otel_collector"])
    files = tls.files_in(tmp_path, "otel_collector")
    collector = OtlpCollector()
    endpoint = await collector.start(tls.server_credentials(files, require_client_cert=False))
    try:
        await export_one_span(OtlpTarget(endpoint, ca_file=files.ca), "with-ca")
        await export_one_span(OtlpTarget(endpoint), "without-ca")
        await export_one_span(OtlpTarget(endpoint, insecure=True), "plaintext")
    finally:
        await collector.stop()
    assert endpoint.startswith("https://")
    assert [span.name for span in collector.spans] == ["with-ca"]


def test_plaintext_only_for_http_or_a_loopback_collector_unless_told() -> None:
    assert OtlpTarget("http://collector:4317").plaintext
    assert not OtlpTarget("https://127.0.0.1:4317").plaintext
    assert OtlpTarget("127.0.0.1:4317").plaintext and OtlpTarget("localhost:4317").plaintext
    assert not OtlpTarget("collector.example:4317").plaintext
    assert not OtlpTarget("http://collector:4317", ca_file=Path("ca.pem")).plaintext
    assert OtlpTarget("collector.example:4317", insecure=True).plaintext
    assert not OtlpTarget("http://127.0.0.1:4317", insecure=False).plaintext
    assert OtlpTarget("http://127.0.0.1:4317").credentials() is None
