"""Every engine in deploy/kubernetes probes startup, readiness and liveness with gRPC health on
the plaintext health port the engine serves beside its mTLS port."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from memmesh.runtime.settings import ENGINE_NAMES

MANIFESTS = sorted((Path(__file__).resolve().parents[3] / "deploy" / "kubernetes").glob("*.yaml"))
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def _engine_containers(path: Path) -> dict[str, dict[str, Any]]:
    """Each engine's container, by the engine the image is told to run."""
    containers: dict[str, dict[str, Any]] = {}
    for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if not document or document["kind"] not in ("Deployment", "StatefulSet"):
            continue
        for container in document["spec"]["template"]["spec"]["containers"]:
            engine = container["args"][0]
            assert engine not in containers, f"{engine} runs twice in {path.name}"
            containers[engine] = container
    return containers


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_every_engine_runs_in_each_manifest(path: Path) -> None:
    assert sorted(_engine_containers(path)) == sorted(ENGINE_NAMES)


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_startup_readiness_and_liveness_use_grpc_health_on_the_engine_health_port(
    path: Path,
) -> None:
    # The engine port serves mTLS, which the kubelet's gRPC probe cannot speak: probes go to
    # the plaintext health-only port the engine serves beside it.
    for engine, container in _engine_containers(path).items():
        env = {item["name"]: item.get("value") for item in container.get("env", [])}
        served, health = env.get("MEMMESH_PORT"), env.get("MEMMESH_HEALTH_PORT")
        assert served and health and served != health, engine
        declared = {port["containerPort"] for port in container["ports"]}
        assert {int(served), int(health)} <= declared, engine
        for probe in PROBES:
            action = container[probe]
            assert set(action) & {"httpGet", "exec", "tcpSocket"} == set(), f"{engine} {probe}"
            assert action["grpc"]["port"] == int(health), f"{engine} {probe}"
