"""Mesh-wide configuration: environment variables with the MEMMESH_ prefix."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from memmesh.runtime.telemetry import OtlpTarget
from memmesh.runtime.tls import TlsFiles, files_in

ENGINE_NAMES = (
    "ledger",
    "current_state",
    "atom_extractor",
    "retrieval_ranker",
    "context_composer",
    "thread_store",
    "exposure_guard",
    "outbox_sync",
    "gateway",
)


# The published development secret: every engine refuses it under MEMMESH_ENV=production.
DEVELOPMENT_INTERNAL_TOKEN = "memmesh-dev-internal-token"


class MeshSettings(BaseSettings):
    """Settings every engine shares; every default runs on a bare machine."""

    model_config = SettingsConfigDict(env_prefix="MEMMESH_", extra="ignore")

    host: str = "127.0.0.1"
    # Port of this engine; 0 asks the OS for a free one (tests, `make run`).
    port: int = 0
    data_dir: Path = Path("var/data")
    # "sqlite" (embedded, one file per engine under data_dir) or a postgresql:// URL.
    storage_url: str = "sqlite"
    # Optional redis:// URL for caches, session buffers and idempotency keys.
    redis_url: str | None = None
    # Shared secret between engines; the default is for a laptop, set it in production.
    internal_token: str = DEVELOPMENT_INTERNAL_TOKEN
    # "production" refuses to start with development secrets, plaintext transport or an
    # unredacted model provider; "development" (the default) serves `make run` as is.
    env: Literal["development", "production"] = "development"
    # Certificate directory made by `memmesh certs DIR`: when set, engines serve mTLS and
    # engine channels present this engine's certificate (<engine>.pem/.key, ca.pem).
    tls_dir: Path | None = None
    # Explicit files instead of (or overriding) the directory's: the CA, this process's
    # certificate and key (e.g. mounted from a Kubernetes Secret under other names).
    tls_ca_file: Path | None = None
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # The identity (certificate name in tls_dir) of a process that is not an engine, such
    # as a benchmark or `memmesh status`; engines use their own name.
    tls_identity: str = "client"
    # A plaintext port serving only grpc.health.v1 (0: none), for probes that cannot speak
    # TLS (the kubelet's gRPC probe); it reveals SERVING or NOT_SERVING and nothing else.
    health_port: int = Field(default=0, ge=0, le=65535)
    # OTLP/gRPC collector endpoint, e.g. http://127.0.0.1:4317; unset disables export of
    # spans and metrics.
    otlp_endpoint: str | None = None
    # A CA file verifying the collector's certificate: the export goes over TLS.
    otlp_ca_file: Path | None = None
    # Force plaintext (true) or TLS (false); unset: plaintext to http:// and loopback only.
    otlp_insecure: bool | None = None
    # How often metrics are exported, milliseconds.
    otlp_metric_interval_ms: int = Field(default=15000, ge=10)
    log_level: str = "INFO"
    # The process that started this engine (`memmesh run`, a test's mesh), set by it: when
    # that process is gone the engine stops too, instead of holding its port and files.
    supervisor_pid: int | None = None
    # Addresses of the other engines, host:port.
    ledger_addr: str = "127.0.0.1:50051"
    current_state_addr: str = "127.0.0.1:50052"
    atom_extractor_addr: str = "127.0.0.1:50053"
    retrieval_ranker_addr: str = "127.0.0.1:50054"
    context_composer_addr: str = "127.0.0.1:50055"
    thread_store_addr: str = "127.0.0.1:50056"
    exposure_guard_addr: str = "127.0.0.1:50057"
    outbox_sync_addr: str = "127.0.0.1:50058"
    gateway_addr: str = "127.0.0.1:50050"
    # Deadline of an engine-to-engine call made without an inbound deadline, seconds.
    default_call_timeout_s: float = Field(default=2.0, gt=0)

    @property
    def otlp_target(self) -> OtlpTarget | None:
        """Where spans and metrics are exported, and how; None: nowhere."""
        if not self.otlp_endpoint:
            return None
        return OtlpTarget(self.otlp_endpoint, self.otlp_ca_file, self.otlp_insecure)

    @property
    def tls_enabled(self) -> bool:
        """Whether TLS files are configured (a directory or an explicit CA)."""
        return self.tls_dir is not None or self.tls_ca_file is not None

    def tls_files(self, identity: str) -> TlsFiles:
        """The CA, certificate and key of `identity`, explicit paths winning over tls_dir."""
        base = files_in(self.tls_dir, identity) if self.tls_dir is not None else None
        ca = self.tls_ca_file or (base.ca if base else None)
        cert = self.tls_cert_file or (base.cert if base else None)
        key = self.tls_key_file or (base.key if base else None)
        if ca is None or cert is None or key is None:
            raise ValueError(
                "TLS needs MEMMESH_TLS_DIR, or MEMMESH_TLS_CA_FILE with MEMMESH_TLS_CERT_FILE "
                "and MEMMESH_TLS_KEY_FILE"
            )
        return TlsFiles(ca, cert, key)

    def addr_of(self, engine: str) -> str:
        """Address of an engine by name."""
        return str(getattr(self, f"{engine}_addr"))

    def sqlite_path(self, engine: str) -> Path:
        """The SQLite file of an engine under data_dir."""
        return self.data_dir / f"{engine}.sqlite3"
