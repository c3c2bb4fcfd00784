"""The collector config and the Grafana dashboard stay in step with the code: the collector
receives OTLP and feeds Prometheus, every series the dashboard queries is one the code's
instruments produce (named as the collector's Prometheus exporter names them), and every
instrument has a panel."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from opentelemetry.sdk.metrics import MeterProvider

from memmesh.runtime.metrics import InstrumentInfo, Instruments

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
# The exporter's unit words (add_metric_suffixes); annotations in braces name no unit.
UNIT_WORDS = {"ms": "milliseconds", "s": "seconds", "By": "bytes"}


def prometheus_series(info: InstrumentInfo) -> set[str]:
    """The series names Prometheus gets for one instrument through the collector."""
    base = re.sub(r"[^a-zA-Z0-9_:]", "_", info.name)
    unit = "" if info.unit.startswith("{") else UNIT_WORDS.get(info.unit, info.unit)
    if unit and not base.endswith(f"_{unit}"):
        base = f"{base}_{unit}"
    if info.kind == "counter":
        return {f"{base}_total"}
    if info.kind == "histogram":
        return {f"{base}_bucket", f"{base}_sum", f"{base}_count"}
    return {base}


def catalogue() -> list[InstrumentInfo]:
    return Instruments(MeterProvider().get_meter("test")).catalogue


def dashboard_queries() -> list[str]:
    dashboard = json.loads((DEPLOY / "grafana" / "memmesh-dashboard.json").read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def queried_series() -> set[str]:
    """The series names in the queries (label names in `by (...)` and matchers left out)."""
    found: set[str] = set()
    for expr in dashboard_queries():
        bare = re.sub(r"\b(by|without)\s*\([^)]*\)|\{[^}]*\}", " ", expr)
        found.update(re.findall(r"\bmemmesh_\w+", bare))
    return found


def test_the_collector_receives_otlp_and_exports_metrics_to_prometheus() -> None:
    config = yaml.safe_load((DEPLOY / "otel" / "collector.yaml").read_text())
    assert "grpc" in config["receivers"]["otlp"]["protocols"]
    pipelines = config["service"]["pipelines"]
    assert "prometheus" in pipelines["metrics"]["exporters"]
    assert pipelines["traces"]["exporters"]
    for pipeline in pipelines.values():
        for part in ("receivers", "processors", "exporters"):
            for component in pipeline.get(part, []):
                assert component in config[part], f"{component} is not defined under {part}"


def test_every_series_the_dashboard_queries_is_one_the_code_emits() -> None:
    emitted = set().union(*(prometheus_series(info) for info in catalogue()))
    queried = queried_series()
    assert queried, "the dashboard queries no memmesh series"
    assert queried <= emitted, sorted(queried - emitted)


def test_every_instrument_has_a_panel() -> None:
    queried = queried_series()
    missing = [info.name for info in catalogue() if not prometheus_series(info) & queried]
    assert missing == []


def test_instrument_names_are_unique() -> None:
    names = [info.name for info in catalogue()]
    assert len(names) == len(set(names))
