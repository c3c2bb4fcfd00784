"""Every engine Deployment in deploy/kubernetes probes startup, readiness and liveness with gRPC
health on the plaintext health port the engine serves beside its mTLS port."""

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


def test_startup_readiness_and_liveness_use_grpc_health_on_the_engine_health_port() -> None:
    # The engine port serves mTLS, which the kubelet's gRPC probe cannot speak: probes go to
    # the plaintext health-only port the engine serves beside it.
    for engine, document in _deployments().items():
        served = re.search(r'name: MEMMESH_PORT\n\s+value: "(\d+)"', document)
        port = re.search(r'name: MEMMESH_HEALTH_PORT\n\s+value: "(\d+)"', document)
        assert served and port, engine
        assert port.group(1) != served.group(1), engine
        assert re.search(rf"containerPort: {served.group(1)}\n", document), engine
        assert re.search(rf"containerPort: {port.group(1)}\n", document), engine
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert re.search(rf"{probe}:\n\s+grpc:\n\s+port: {port.group(1)}\n", document), (
                f"{engine} {probe}"
            )
        assert (
            "httpGet" not in document and "exec:" not in document and "tcpSocket" not in document
        ), engine
