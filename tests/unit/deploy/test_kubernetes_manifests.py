"""deploy/kubernetes/*.yaml, offline: every document against the Kubernetes API schema of a
pinned version (strict: an unknown field is an error), and the references between them."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

KUBERNETES_VERSION = "1.33.0"
MANIFESTS = sorted((Path(__file__).parents[3] / "deploy" / "kubernetes").glob("*.yaml"))
WORKLOADS = ("Deployment", "StatefulSet")
LOOPBACK = ("127.0.0.1", "localhost")

Doc = dict[str, Any]


def _load(path: Path) -> list[Doc]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _containers(workload: Doc) -> list[Doc]:
    return list(workload["spec"]["template"]["spec"]["containers"])


def _env(container: Doc, config_maps: dict[str, dict[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(config_maps[source["configMapRef"]["name"]])
    env.update({var["name"]: var["value"] for var in container.get("env", []) if "value" in var})
    return env


def _probe_ports(container: Doc) -> Iterator[tuple[str, int | str]]:
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        action = container.get(probe)
        if action is None:
            continue
        for kind in ("grpc", "httpGet", "tcpSocket"):
            if kind in action:
                yield probe, action[kind]["port"]


def _labels_match(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def schema_problems(docs: list[Doc]) -> list[str]:
    """Each document's first violation of the pinned version's strict schema."""
    problems = []
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            where = ".".join(str(part) for part in error.path)
            problems.append(f"{doc['kind']}/{doc['metadata']['name']}: {where}: {error.message}")
        except kubernetes_validate.SchemaNotFoundError as error:
            problems.append(error.message)
    return problems


def reference_problems(docs: list[Doc]) -> list[str]:
    """Services select a workload and target its ports, probes use declared ports, every
    engine address names a Service (or, on loopback, a port of the same pod), every
    ConfigMap used exists, autoscalers and disruption budgets name a workload."""
    problems: list[str] = []
    by_kind: dict[str, dict[str, Doc]] = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    workloads = [doc for kind in WORKLOADS for doc in by_kind.get(kind, {}).values()]
    services = by_kind.get("Service", {})
    config_maps = {name: cm.get("data", {}) for name, cm in by_kind.get("ConfigMap", {}).items()}

    def pod_ports(workload: Doc) -> dict[int | str, int]:
        ports: dict[int | str, int] = {}
        for container in _containers(workload):
            for port in container.get("ports", []):
                ports[port["containerPort"]] = port["containerPort"]
                if "name" in port:
                    ports[port["name"]] = port["containerPort"]
        return ports

    def selected(selector: dict[str, str]) -> list[Doc]:
        return [
            w
            for w in workloads
            if _labels_match(selector, w["spec"]["template"]["metadata"]["labels"])
        ]

    for name, service in services.items():
        targets = selected(service["spec"].get("selector", {}))
        if not service["spec"].get("selector") or not targets:
            problems.append(f"Service/{name} selects no workload's pods")
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            for workload in targets:
                if target not in pod_ports(workload):
                    problems.append(
                        f"Service/{name} targets port {target}, not declared by "
                        f"{workload['kind']}/{workload['metadata']['name']}"
                    )

    for workload in workloads:
        label = f"{workload['kind']}/{workload['metadata']['name']}"
        spec = workload["spec"]
        if not _labels_match(
            spec["selector"]["matchLabels"], spec["template"]["metadata"]["labels"]
        ):
            problems.append(f"{label}: selector does not match its pod labels")
        ports = pod_ports(workload)
        for container in _containers(workload):
            declared = {port["containerPort"] for port in container.get("ports", [])} | {
                port["name"] for port in container.get("ports", []) if "name" in port
            }
            for probe, port in _probe_ports(container):
                if port not in declared:
                    problems.append(f"{label} {container['name']} {probe}: port {port} undeclared")
            refs = [
                s["configMapRef"]["name"]
                for s in container.get("envFrom", [])
                if "configMapRef" in s
            ]
            missing = [ref for ref in refs if ref not in config_maps]
            problems += [f"{label} {container['name']}: no ConfigMap {ref}" for ref in missing]
            if missing:
                continue
            for var, value in _env(container, config_maps).items():
                if not (var.startswith("MEMMESH_") and var.endswith("_ADDR")):
                    continue
                host, _, port_text = value.rpartition(":")
                port = int(port_text)
                if host in LOOPBACK:
                    if port not in ports:
                        problems.append(
                            f"{label} {container['name']}: {var}={value}: no such port in the pod"
                        )
                    continue
                service = services.get(host)
                if service is None:
                    problems.append(
                        f"{label} {container['name']}: {var}={value}: no Service {host}"
                    )
                elif port not in {p["port"] for p in service["spec"]["ports"]}:
                    problems.append(
                        f"{label} {container['name']}: {var}={value}: Service has no port {port}"
                    )

    names = {(w["kind"], w["metadata"]["name"]): w for w in workloads}
    for name, hpa in by_kind.get("HorizontalPodAutoscaler", {}).items():
        target = hpa["spec"]["scaleTargetRef"]
        if (target["kind"], target["name"]) not in names:
            problems.append(f"HorizontalPodAutoscaler/{name} scales no workload in the file")
    for name, pdb in by_kind.get("PodDisruptionBudget", {}).items():
        if not selected(pdb["spec"]["selector"]["matchLabels"]):
            problems.append(f"PodDisruptionBudget/{name} selects no workload's pods")
    return problems


def test_there_are_manifests() -> None:
    assert {path.name for path in MANIFESTS} >= {"mesh.yaml", "embedded.yaml"}


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda path: path.name)
def test_every_document_validates_against_the_pinned_kubernetes_schema(path: Path) -> None:
    assert schema_problems(_load(path)) == []


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda path: path.name)
def test_references_between_documents_hold(path: Path) -> None:
    assert reference_problems(_load(path)) == []


def _mesh() -> list[Doc]:
    return _load(next(path for path in MANIFESTS if path.name == "mesh.yaml"))


def _find(docs: list[Doc], kind: str, name: str) -> Doc:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def test_every_engine_is_deployed_and_the_stateless_ones_scale() -> None:
    docs = _mesh()
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    assert set(deployments) == {
        "gateway", "ledger", "current-state", "atom-extractor", "retrieval-ranker",
        "context-composer", "thread-store", "exposure-guard", "outbox-sync",
    }  # fmt: skip
    scaled = {
        d["spec"]["scaleTargetRef"]["name"] for d in docs if d["kind"] == "HorizontalPodAutoscaler"
    }
    budgeted = {d["metadata"]["name"] for d in docs if d["kind"] == "PodDisruptionBudget"}
    assert scaled == budgeted == set(deployments) - {"atom-extractor"}
    for deployment in deployments.values():
        for container in _containers(deployment):
            assert {"requests", "limits"} <= container["resources"].keys()
            assert "grpc" in container["livenessProbe"] and "grpc" in container["readinessProbe"]
            env_from = {s.get("secretRef", {}).get("name") for s in container["envFrom"]}
            assert "memmesh" in env_from  # PostgreSQL and Redis URLs with the other secrets
    config = _find(docs, "ConfigMap", "memmesh")["data"]
    assert not {"MEMMESH_STORAGE_URL", "MEMMESH_REDIS_URL"} & config.keys()


def _broken(mutate: Any) -> list[Doc]:
    docs = copy.deepcopy(_mesh())
    mutate(docs)
    return docs


def test_a_schema_violation_is_caught() -> None:
    def mutate(docs: list[Doc]) -> None:
        _find(docs, "Deployment", "ledger")["spec"]["replicas"] = "two"
        _find(docs, "Service", "gateway")["spec"]["portz"] = []

    problems = schema_problems(_broken(mutate))
    assert any("Deployment/ledger: spec.replicas" in p for p in problems), problems
    assert any(p.startswith("Service/gateway") for p in problems), problems


def test_a_service_selecting_nothing_is_caught() -> None:
    def mutate(docs: list[Doc]) -> None:
        _find(docs, "Service", "thread-store")["spec"]["selector"] = {"app": "thread-stor"}

    assert "Service/thread-store selects no workload's pods" in reference_problems(_broken(mutate))


def test_a_probe_on_an_undeclared_port_is_caught() -> None:
    def mutate(docs: list[Doc]) -> None:
        container = _containers(_find(docs, "Deployment", "gateway"))[0]
        container["readinessProbe"]["grpc"]["port"] = 51059

    problems = reference_problems(_broken(mutate))
    assert "Deployment/gateway gateway readinessProbe: port 51059 undeclared" in problems


def test_an_engine_address_without_a_service_is_caught() -> None:
    def mutate(docs: list[Doc]) -> None:
        _find(docs, "ConfigMap", "memmesh")["data"]["MEMMESH_LEDGER_ADDR"] = "ledgr:50051"

    problems = reference_problems(_broken(mutate))
    assert any("MEMMESH_LEDGER_ADDR=ledgr:50051: no Service ledgr" in p for p in problems)


def test_an_engine_address_on_a_wrong_port_is_caught() -> None:
    def mutate(docs: list[Doc]) -> None:
        _find(docs, "ConfigMap", "memmesh")["data"]["MEMMESH_GATEWAY_ADDR"] = "gateway:50051"

    problems = reference_problems(_broken(mutate))
    assert any("MEMMESH_GATEWAY_ADDR=gateway:50051: Service has no port" in p for p in problems)


def test_an_autoscaler_of_a_missing_deployment_is_caught() -> None:
    def mutate(docs: list[Doc]) -> None:
        docs.remove(_find(docs, "Deployment", "outbox-sync"))

    problems = reference_problems(_broken(mutate))
    assert "HorizontalPodAutoscaler/outbox-sync scales no workload in the file" in problems
