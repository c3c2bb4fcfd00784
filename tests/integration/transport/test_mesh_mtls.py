"""The whole mesh in production mode over mTLS (`memmesh certs` + MEMMESH_TLS_DIR): Ingest
and Brief through a TLS gateway client; plaintext clients and clients with another CA's
certificate are refused; a mesh certificate without the internal token is refused too,
reflection included."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from memmesh.client.gateway import GatewayClient
from memmesh.runtime import tls
from memmesh.runtime.interceptors import INTERNAL_TOKEN_HEADER
from memmesh.runtime.supervisor import Mesh, built_engines

NOW_US = 1_767_225_600 * 1_000_000
# The mesh runs as production: its own token and tenant key (the defaults are refused).
INTERNAL_TOKEN = "mtls-test-internal-token-5f0c2a9e7b41"
TENANT_KEY = "mtls-test-tenant-key-c81d3e60"

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("mesh-certs")
    tls.make_certificates(directory, built_engines())
    return directory


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete second set of certificates, from a CA the mesh does not trust."""
    directory = tmp_path_factory.mktemp("other-certs")
    tls.make_certificates(directory, built_engines())
    return directory


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory, certs: Path) -> Iterator[Mesh]:
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path_factory.mktemp("mtls-mesh")),
        "MEMMESH_TLS_DIR": str(certs),
        "MEMMESH_ENV": "production",
        "MEMMESH_INTERNAL_TOKEN": INTERNAL_TOKEN,
        # Production wraps learning capsules and signs learning packages with its own keys.
        "MEMMESH_ATOM_EXTRACTOR_LEARNING_MASTER_SECRET": "mtls-test-learning-master-secret",
        "MEMMESH_ATOM_EXTRACTOR_LEARNING_SIGNING_SEED": base64.b64encode(bytes(range(32))).decode(),
        "MEMMESH_GATEWAY_TENANT_KEYS": json.dumps({"demo": TENANT_KEY}),
        "MEMMESH_LOG_LEVEL": "WARNING",
        # The first Brief opens every engine channel (TLS handshakes) on a shared machine;
        # a budget overrun would hide what this module tests. Latency is the benchmark's.
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "3000",
    }
    with Mesh(built_engines(), env=env) as running:
        yield running


def _read(path: Path) -> bytes:
    return path.read_bytes()


@pytest_asyncio.fixture(loop_scope="module")
async def client(mesh: Mesh, certs: Path) -> AsyncIterator[GatewayClient]:
    credentials = grpc.ssl_channel_credentials(root_certificates=_read(certs / "ca.pem"))
    async with GatewayClient(
        mesh.addrs["gateway"], TENANT_KEY, internal_token=INTERNAL_TOKEN, credentials=credentials
    ) as gateway:
        yield gateway


def _mesh_client(certs: Path, identity: str, trust: Path | None = None) -> grpc.ChannelCredentials:
    """Credentials of `identity` from `certs`, trusting the CA in `trust` (default: the same)."""
    return grpc.ssl_channel_credentials(
        root_certificates=_read((trust or certs) / "ca.pem"),
        private_key=_read(certs / f"{identity}.key"),
        certificate_chain=_read(certs / f"{identity}.pem"),
    )


def _engine_channel(addr: str, credentials: grpc.ChannelCredentials | None) -> grpc.aio.Channel:
    if credentials is None:
        return grpc.aio.insecure_channel(addr)
    return grpc.aio.secure_channel(
        addr, credentials, options=[("grpc.ssl_target_name_override", tls.MESH_SERVER_NAME)]
    )


async def _health(channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...] = ()) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=3, metadata=metadata)
    return int(reply.status)


async def test_ingest_then_brief_through_the_tls_gateway(client: GatewayClient) -> None:
    user_id = f"u-{uuid.uuid4().hex[:10]}"
    reply = await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", NOW_US)
    assert reply.ok
    response = await client.brief(
        user_id, "s1", NOW_US + 60_000_000, "what is my sister called?", mode="in_session"
    )
    # Not degraded: every engine the Brief needs answered over mTLS.
    assert not response.degraded, response.reason_code
    assert any("Sarah" in atom.text for atom in response.bundle.atoms)
    assert [t.turn_id for t in response.bundle.working_memory] == ["t1"]


async def test_a_plaintext_client_is_refused_by_the_gateway(mesh: Mesh) -> None:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY) as plaintext:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await plaintext.brief("u1", "s1", NOW_US, "hello", timeout=3)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_a_client_that_does_not_trust_the_mesh_ca_gets_no_gateway(
    mesh: Mesh, other_ca: Path
) -> None:
    credentials = grpc.ssl_channel_credentials(root_certificates=_read(other_ca / "ca.pem"))
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, credentials=credentials) as c:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await c.brief("u1", "s1", NOW_US, "hello", timeout=3)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize("engine", [e for e in built_engines() if e != "gateway"])
async def test_every_engine_refuses_plaintext_and_a_certificate_from_another_ca(
    mesh: Mesh, certs: Path, other_ca: Path, engine: str
) -> None:
    addr = mesh.addrs[engine]
    async with _engine_channel(addr, _mesh_client(certs, "client")) as trusted:
        assert await _health(trusted) == health_pb2.HealthCheckResponse.SERVING
    # The other CA's certificate, while trusting the mesh CA: the handshake fails on the
    # engine's side, because the client certificate is not from the mesh CA.
    foreign = _mesh_client(other_ca, engine, trust=certs)
    for credentials in (None, foreign, grpc.ssl_channel_credentials(_read(certs / "ca.pem"))):
        async with _engine_channel(addr, credentials) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await _health(channel, ((INTERNAL_TOKEN_HEADER, INTERNAL_TOKEN),))
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, credentials


async def _list_services(
    channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...]
) -> list[str]:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    names: list[str] = []
    async for reply in stub.ServerReflectionInfo(iter([request]), metadata=metadata, timeout=3):
        names += [service.name for service in reply.list_services_response.service]
    return names


async def _refused_reflection(channel: grpc.aio.Channel) -> grpc.StatusCode:
    """The status of a reflection call made without credentials. It sends no message: the
    refusal comes from the call's metadata, and a message racing the server's abort would
    fail on the client's side first (INTERNAL "execute_batch")."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        async for _ in stub.ServerReflectionInfo(iter(()), metadata=(), timeout=3):
            pass
    code: grpc.StatusCode = refused.value.code()
    return code


async def test_reflection_needs_the_token_as_well_as_a_mesh_certificate(
    mesh: Mesh, certs: Path
) -> None:
    async with _engine_channel(mesh.addrs["ledger"], _mesh_client(certs, "client")) as channel:
        assert await _refused_reflection(channel) == grpc.StatusCode.UNAUTHENTICATED
        names = await _list_services(channel, ((INTERNAL_TOKEN_HEADER, INTERNAL_TOKEN),))
    assert "memmesh.ledger.v1.LedgerService" in names


async def test_the_gateway_reflects_only_for_a_tenant_key(mesh: Mesh, certs: Path) -> None:
    credentials = grpc.ssl_channel_credentials(root_certificates=_read(certs / "ca.pem"))
    async with grpc.aio.secure_channel(mesh.addrs["gateway"], credentials) as channel:
        assert await _refused_reflection(channel) == grpc.StatusCode.UNAUTHENTICATED
        names = await _list_services(channel, (("authorization", f"Bearer {TENANT_KEY}"),))
    assert "memmesh.gateway.v1.GatewayService" in names


def _status(mesh: Mesh, tls_dir: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMMESH_")}
    env |= {f"MEMMESH_{name.upper()}_ADDR": addr for name, addr in mesh.addrs.items()}
    if tls_dir is not None:
        env["MEMMESH_TLS_DIR"] = str(tls_dir)
    return subprocess.run(
        [sys.executable, "-m", "memmesh.cli.main", "status", "--timeout", "3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_memmesh_status_checks_the_mesh_over_mtls(mesh: Mesh, certs: Path) -> None:
    served = await asyncio.to_thread(_status, mesh, certs)
    assert served.returncode == 0, served.stdout + served.stderr
    assert served.stdout.count("SERVING") == len(built_engines())
    # Without the certificates, no engine answers it.
    refused = await asyncio.to_thread(_status, mesh, None)
    assert refused.returncode == 1 and "SERVING" not in refused.stdout.replace("NOT_SERVING", "")
