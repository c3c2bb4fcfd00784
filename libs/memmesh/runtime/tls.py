"""Transport security: a development CA and certificates, and the gRPC credentials made of them.

A certificate directory (`memmesh certs DIR`) holds:

- `ca.pem` (the mesh CA every engine trusts) and `ca.key` (kept off the engines' hosts);
- `<engine>.pem` / `<engine>.key` per engine: one certificate for both ends of a call
  (serverAuth and clientAuth), SAN = the engine's name, its Kubernetes service name,
  localhost and 127.0.0.1;
- `gateway-public.pem` / `.key`: the certificate the gateway shows to tenants' clients;
- `client.pem` / `.key`: a mesh client for operators' tools (`memmesh status`, benchmarks).

With a directory configured, every engine serves TLS and requires a client certificate
signed by the mesh CA (mTLS), and every channel between engines presents the calling
engine's certificate. The gateway serves tenants with TLS and takes no client certificate:
tenants authenticate with their key.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_NAME = "ca"
GATEWAY_PUBLIC = "gateway-public"
TOOL_CLIENT = "client"
# The OpenTelemetry Collector the engines export to (deploy/otel/collector.yaml): a server
# certificate only, so it can never call an engine.
COLLECTOR = "otel-collector"
# The name engines' certificates are checked against on every engine-to-engine channel.
MESH_SERVER_NAME = "memmesh.mesh"
VALID_DAYS = 365


@dataclass(frozen=True)
class TlsFiles:
    """The PEM files of one identity: the CA it trusts, its certificate and its key."""

    ca: Path
    cert: Path
    key: Path

    def read(self) -> tuple[bytes, bytes, bytes]:
        """(ca, key, cert) bytes; a missing or unreadable file raises OSError naming it."""
        return self.ca.read_bytes(), self.key.read_bytes(), self.cert.read_bytes()


def files_in(directory: Path, identity: str) -> TlsFiles:
    """The files of `identity` (an engine name, `gateway-public` or `client`) in a cert directory."""
    return TlsFiles(
        directory / f"{CA_NAME}.pem", directory / f"{identity}.pem", directory / f"{identity}.key"
    )


def server_credentials(files: TlsFiles, *, require_client_cert: bool) -> grpc.ServerCredentials:
    """TLS for a server; with `require_client_cert`, only peers with a certificate from the CA."""
    ca, key, cert = files.read()
    return grpc.ssl_server_credentials(
        [(key, cert)],
        root_certificates=ca if require_client_cert else None,
        require_client_auth=require_client_cert,
    )


def channel_credentials(files: TlsFiles, *, present_cert: bool = True) -> grpc.ChannelCredentials:
    """TLS for a client that trusts the CA and, with `present_cert`, shows its own certificate."""
    ca, key, cert = files.read()
    if not present_cert:
        return grpc.ssl_channel_credentials(root_certificates=ca)
    return grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=key, certificate_chain=cert
    )


def peer_has_certificate(auth_context: dict[str, list[bytes]]) -> bool:
    """Whether gRPC verified a client certificate for this call (mTLS)."""
    return bool(auth_context.get("x509_pem_cert") or auth_context.get("x509_common_name"))


# --- making certificates (development and tests) ---------------------------------------


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "memmesh"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class Authority:
    """A CA that signs certificates."""

    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def create(cls, common_name: str = "memmesh development CA") -> Authority:
        key = _key()
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .sign(key, hashes.SHA256())
        )
        return cls(key, cert)

    @classmethod
    def load(cls, directory: Path) -> Authority:
        key = serialization.load_pem_private_key(
            (directory / f"{CA_NAME}.key").read_bytes(), password=None
        )
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{directory / CA_NAME}.key is not an EC key")
        cert = x509.load_pem_x509_certificate((directory / f"{CA_NAME}.pem").read_bytes())
        return cls(key, cert)

    def issue(
        self, common_name: str, dns_names: Iterable[str], ips: Iterable[str], *, client: bool
    ) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) for a server (and a client too, with `client`)."""
        key = _key()
        now = datetime.datetime.now(datetime.UTC)
        names: list[x509.GeneralName] = [x509.DNSName(name) for name in dict.fromkeys(dns_names)]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in dict.fromkeys(ips)]
        usages = [ExtendedKeyUsageOID.SERVER_AUTH] + ([ExtendedKeyUsageOID.CLIENT_AUTH] * client)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), False
            )
            .sign(self.key, hashes.SHA256())
        )
        return _pem_cert(cert), _pem_key(key)


def _write(path: Path, data: bytes, *, secret: bool) -> None:
    path.write_bytes(data)
    if secret:
        os.chmod(path, 0o600)


def make_certificates(
    directory: Path,
    engines: Sequence[str],
    *,
    gateway_hosts: Sequence[str] = (),
    reuse_ca: bool = True,
) -> list[Path]:
    """Write a development CA (or reuse the one in `directory`) and every certificate; return
    the files written. Engines' SANs: name, Kubernetes service name (hyphens), the mesh name,
    localhost, 127.0.0.1; the gateway's public certificate adds `gateway_hosts`."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if reuse_ca and (directory / f"{CA_NAME}.key").exists():
        authority = Authority.load(directory)
    else:
        authority = Authority.create()
        for suffix, data, secret in (
            ("pem", _pem_cert(authority.cert), False),
            ("key", _pem_key(authority.key), True),
        ):
            _write(directory / f"{CA_NAME}.{suffix}", data, secret=secret)
            written.append(directory / f"{CA_NAME}.{suffix}")
    local_dns, local_ips = ["localhost"], ["127.0.0.1", "::1"]
    identities: list[tuple[str, list[str], list[str], bool]] = [
        (engine, [engine, engine.replace("_", "-"), MESH_SERVER_NAME, *local_dns], local_ips, True)
        for engine in engines
    ]
    hosts = [h for h in gateway_hosts if not _is_ip(h)]
    ips = [h for h in gateway_hosts if _is_ip(h)]
    identities.append((GATEWAY_PUBLIC, ["gateway", *hosts, *local_dns], [*ips, *local_ips], False))
    identities.append((TOOL_CLIENT, [TOOL_CLIENT], [], True))
    identities.append((COLLECTOR, [COLLECTOR, *local_dns], local_ips, False))
    for identity, dns_names, ip_list, client in identities:
        cert, key = authority.issue(identity, dns_names, ip_list, client=client)
        _write(directory / f"{identity}.pem", cert, secret=False)
        _write(directory / f"{identity}.key", key, secret=True)
        written += [directory / f"{identity}.pem", directory / f"{identity}.key"]
    return written


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
