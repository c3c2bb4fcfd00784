"""An engine server with the mesh's TLS: mTLS on the engine port (a certificate from the
mesh CA AND the token), reflection behind the same rule, health open on a plaintext
health-only port for probes that cannot speak TLS; the gateway serves TLS without client
certificates. Certificates come from `memmesh certs`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from memmesh.cli.main import main as memmesh
from memmesh.runtime import tls
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.interceptors import INTERNAL_TOKEN_HEADER, InternalTokenAuthenticator
from memmesh.runtime.server import EngineServer, start_server
from memmesh.runtime.settings import ENGINE_NAMES

TOKEN = "test-token"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("certs")
    assert memmesh(["certs", str(directory), "--gateway-host", "memmesh.example.org"]) == 0
    return directory


def test_certs_makes_a_ca_and_a_certificate_per_engine_naming_it(certs: Path) -> None:
    from cryptography import x509

    ca = x509.load_pem_x509_certificate((certs / "ca.pem").read_bytes())
    for engine in ENGINE_NAMES:
        cert = x509.load_pem_x509_certificate((certs / f"{engine}.pem").read_bytes())
        assert cert.issuer == ca.subject
        cert.verify_directly_issued_by(ca)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns = names.get_values_for_type(x509.DNSName)
        assert {engine, engine.replace("_", "-"), "localhost", tls.MESH_SERVER_NAME} <= set(dns)
        assert "127.0.0.1" in {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
        assert (certs / f"{engine}.key").stat().st_mode & 0o077 == 0
    public = x509.load_pem_x509_certificate((certs / "gateway-public.pem").read_bytes())
    dns = public.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "memmesh.example.org" in dns.get_values_for_type(x509.DNSName)
    assert tls.MESH_SERVER_NAME not in dns.get_values_for_type(x509.DNSName)


def test_certs_makes_the_collector_a_server_certificate_only(certs: Path) -> None:
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    ca = x509.load_pem_x509_certificate((certs / "ca.pem").read_bytes())
    cert = x509.load_pem_x509_certificate((certs / f"{tls.COLLECTOR}.pem").read_bytes())
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "otel-collector" in names.get_values_for_type(x509.DNSName)
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert (certs / f"{tls.COLLECTOR}.key").stat().st_mode & 0o077 == 0


def test_certs_keeps_the_ca_unless_asked(certs: Path) -> None:
    before = (certs / "ca.pem").read_bytes()
    assert memmesh(["certs", str(certs)]) == 0
    assert (certs / "ca.pem").read_bytes() == before


@pytest_asyncio.fixture
async def mtls_server(certs: Path) -> AsyncIterator[EngineServer]:
    # Health only: the policy, TLS and reflection are what is under test.
    server = await start_server(
        "127.0.0.1",
        0,
        [],
        InternalTokenAuthenticator(TOKEN),
        credentials=tls.server_credentials(tls.files_in(certs, "ledger"), require_client_cert=True),
        require_peer_certificate=True,
        health_port=0,
    )
    yield server
    await server.stop(None)


def _secure(port: int, credentials: grpc.ChannelCredentials) -> grpc.aio.Channel:
    return grpc.aio.secure_channel(
        f"127.0.0.1:{port}",
        credentials,
        options=[("grpc.ssl_target_name_override", tls.MESH_SERVER_NAME)],
    )


async def _check(channel: grpc.aio.Channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(), timeout=3
    )
    return int(reply.status)


async def _reflect(channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...]) -> list[str]:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    names: list[str] = []
    async for reply in stub.ServerReflectionInfo(iter([request]), metadata=metadata, timeout=3):
        names += [s.name for s in reply.list_services_response.service]
    return names


async def _refused_reflection(
    channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...]
) -> grpc.aio.AioRpcError:
    """The error a reflection stream the server refuses ends with. No request is written: the
    server refuses on the call's metadata, and a client write racing its refusal turns the
    status the client reports into INTERNAL (grpc/grpc#36066). A stream the server accepts
    ends without error here, failing the caller's test."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        async for _ in stub.ServerReflectionInfo(iter(()), metadata=metadata, timeout=3):
            pass
    return refused.value


async def test_an_engine_channel_with_the_mesh_certificate_is_served(
    mtls_server: EngineServer, certs: Path
) -> None:
    files = tls.files_in(certs, "gateway")
    async with engine_channel(
        f"127.0.0.1:{mtls_server.port}", TOKEN, credentials=tls.channel_credentials(files)
    ) as channel:
        assert await _check(channel) == health_pb2.HealthCheckResponse.SERVING


async def test_plaintext_and_certificateless_clients_are_refused(
    mtls_server: EngineServer, certs: Path
) -> None:
    no_cert = grpc.ssl_channel_credentials((certs / "ca.pem").read_bytes())
    for channel in (
        grpc.aio.insecure_channel(f"127.0.0.1:{mtls_server.port}"),
        _secure(mtls_server.port, no_cert),
    ):
        async with channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await _check(channel)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_reflection_without_the_token_is_unauthenticated(
    mtls_server: EngineServer, certs: Path
) -> None:
    async with _secure(
        mtls_server.port, tls.channel_credentials(tls.files_in(certs, "client"))
    ) as channel:
        refused = await _refused_reflection(channel, ())
        assert refused.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "grpc.health.v1.Health" in await _reflect(channel, ((INTERNAL_TOKEN_HEADER, TOKEN),))


async def test_the_plaintext_health_port_answers_health_and_nothing_else(
    mtls_server: EngineServer,
) -> None:
    assert mtls_server.health_port not in (0, mtls_server.port)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{mtls_server.health_port}") as channel:
        assert await _check(channel) == health_pb2.HealthCheckResponse.SERVING
        absent = await _refused_reflection(channel, ((INTERNAL_TOKEN_HEADER, TOKEN),))
        assert absent.code() == grpc.StatusCode.UNIMPLEMENTED
    await mtls_server.stop(None)


async def test_a_plaintext_server_keeps_reflection_behind_the_token() -> None:
    server = await start_server("127.0.0.1", 0, [], InternalTokenAuthenticator(TOKEN))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            assert await _check(channel) == health_pb2.HealthCheckResponse.SERVING
            refused = await _refused_reflection(channel, ())
            assert refused.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await server.stop(None)


async def test_a_call_without_a_verified_peer_certificate_is_unauthenticated() -> None:
    # The policy's own check, beside the TLS layer's: a server told to require a mesh
    # certificate admits no call that arrived without one, token or not.
    server = await start_server(
        "127.0.0.1", 0, [], InternalTokenAuthenticator(TOKEN), require_peer_certificate=True
    )
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            refused = await _refused_reflection(channel, ((INTERNAL_TOKEN_HEADER, TOKEN),))
            assert refused.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "certificate" in (refused.details() or "")
    finally:
        await server.stop(None)
