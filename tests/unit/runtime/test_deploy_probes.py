"""Every engine Deployment in deploy/kubernetes probes startup, readiness and liveness with gRPC
health on the port the engine serves."""

from __future__ import annotations

import re
from pathlib import Path

from memmesh.runtime.settings import ENGINE_NAMES

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "kubernetes" / "mesh.yaml"


def _deployments() -> dict[str, str]:
    documents = MANIFEST.read_text(encoding="utf-8").split("\n---\n")
    deployments = {}
    for document in documents:
        if re.search(r"^kind: Deployment$", document, re.M):
            command = re.search(r'command: \["python", "-m", "memmesh\.engines\.(\w+)"\]', document)
            assert command, document
            deployments[command.group(1)] = document
    return deployments


def test_every_engine_has_a_deployment() -> None:
    assert sorted(_deployments()) == sorted(ENGINE_NAMES)


def test_startup_readiness_and_liveness_use_grpc_health_on_the_engine_port() -> None:
    for engine, document in _deployments().items():
        port = re.search(r'name: MEMMESH_PORT\n\s+value: "(\d+)"', document)
        assert port, engine
        assert re.search(rf"containerPort: {port.group(1)}\n", document), engine
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert re.search(rf"{probe}:\n\s+grpc:\n\s+port: {port.group(1)}\n", document), (
                f"{engine} {probe}"
            )
        assert (
            "httpGet" not in document and "exec:" not in document and "tcpSocket" not in document
        ), engine
