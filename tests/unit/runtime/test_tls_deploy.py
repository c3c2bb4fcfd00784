"""The Kubernetes manifest runs the mesh as production: mTLS from certificates mounted
read-only from one Secret per engine, each engine bound to its pod's address, and a
NetworkPolicy per engine letting in exactly the engines that call it (read from the
engines' composition roots), behind a namespace-wide default deny."""

from __future__ import annotations

import re
from pathlib import Path

from memmesh.runtime.settings import ENGINE_NAMES

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "deploy" / "kubernetes" / "mesh.yaml"


def _documents() -> list[str]:
    return MANIFEST.read_text(encoding="utf-8").split("\n---\n")


def _named(kind: str) -> dict[str, str]:
    found = {}
    for document in _documents():
        if re.search(rf"^kind: {kind}$", document, re.M):
            name = re.search(r"^metadata:\n  name: ([\w-]+)$", document, re.M)
            assert name, document
            found[name.group(1)] = document
    return found


def _service_name(engine: str) -> str:
    return engine.replace("_", "-")


def _callers() -> dict[str, set[str]]:
    """Which engines each engine's composition root opens a channel to, by name."""
    callers: dict[str, set[str]] = {engine: set() for engine in ENGINE_NAMES}
    for caller in ENGINE_NAMES:
        main = ROOT / "services" / "memmesh" / "engines" / caller / "main.py"
        source = main.read_text(encoding="utf-8")
        for callee in ENGINE_NAMES:
            if callee != caller and f'"{callee}"' in source:
                callers[callee].add(caller)
    return callers


def _port(document: str, variable: str) -> str:
    found = re.search(rf'name: {variable}\n\s+value: "(\d+)"', document)
    assert found, variable
    return found.group(1)


def test_the_mesh_runs_in_production_mode_with_tls() -> None:
    [config] = _named("ConfigMap").values()
    assert 'MEMMESH_ENV: "production"' in config
    assert 'MEMMESH_TLS_DIR: "/etc/memmesh/tls"' in config
    assert "0.0.0.0" not in MANIFEST.read_text(encoding="utf-8")


def test_every_engine_binds_its_pod_address_and_mounts_its_own_certificate() -> None:
    deployments = _named("Deployment")
    assert sorted(deployments) == sorted(_service_name(e) for e in ENGINE_NAMES)
    for engine in ENGINE_NAMES:
        document = deployments[_service_name(engine)]
        assert re.search(
            r"name: MEMMESH_HOST\n\s+valueFrom:\n\s+fieldRef:\n\s+fieldPath: status.podIP", document
        ), engine
        assert re.search(r"mountPath: /etc/memmesh/tls\n\s+readOnly: true", document), engine
        secret = re.search(r"secret:\n\s+secretName: ([\w-]+)", document)
        assert secret and secret.group(1) == f"memmesh-tls-{_service_name(engine)}", engine
        keys = set(re.findall(r"- key: ([\w.-]+)\n\s+path: \1$", document, re.M))
        wanted = {"ca.pem", f"{engine}.pem", f"{engine}.key"}
        if engine == "gateway":
            wanted |= {"gateway-public.pem", "gateway-public.key"}
        # Its own certificate and key and the CA, never another engine's, never the CA key.
        assert keys == wanted, engine


def test_a_default_deny_covers_the_namespace() -> None:
    policy = _named("NetworkPolicy")["default-deny-ingress"]
    assert "podSelector: {}" in policy and "- Ingress" in policy
    assert "ingress:" not in policy


def test_each_engine_admits_exactly_its_callers_on_its_grpc_port() -> None:
    policies = _named("NetworkPolicy")
    deployments = _named("Deployment")
    callers = _callers()
    for engine in ENGINE_NAMES:
        name = _service_name(engine)
        policy = policies[name]
        assert re.search(rf"podSelector:\n\s+matchLabels:\n\s+app: {name}\n", policy), engine
        grpc_port = _port(deployments[name], "MEMMESH_PORT")
        health_port = _port(deployments[name], "MEMMESH_HEALTH_PORT")
        ingress = policy.split("  ingress:\n", 1)[1]
        ingress = "\n".join(
            line for line in ingress.splitlines() if not line.strip().startswith("#")
        )
        rules = ingress.removeprefix("    - ").split("\n    - ")
        by_port: dict[str, str] = {}
        for rule in rules:
            port = re.search(r"- port: (\d+)", rule)
            assert port, (engine, rule)
            by_port[port.group(1)] = rule
        assert set(by_port) == {grpc_port, health_port}, engine
        admitted = set(re.findall(r"app: ([\w-]+)", by_port[grpc_port]))
        if engine == "gateway":
            assert "from:" not in by_port[grpc_port]  # tenants' clients, with TLS and a key
        elif callers[engine]:
            assert admitted == {_service_name(c) for c in callers[engine]}, engine
        else:
            assert admitted == set() and 'memmesh-operator: "true"' in by_port[grpc_port], engine
        # The health port is for the kubelet and serves grpc.health.v1 only.
        assert "from:" not in by_port[health_port], engine
