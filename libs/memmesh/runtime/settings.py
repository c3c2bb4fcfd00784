"""Mesh-wide configuration: environment variables with the MEMMESH_ prefix."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

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
    internal_token: str = "memmesh-dev-internal-token"
    # OTLP/gRPC collector endpoint, e.g. http://127.0.0.1:4317; unset disables export.
    otlp_endpoint: str | None = None
    log_level: str = "INFO"
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

    def addr_of(self, engine: str) -> str:
        """Address of an engine by name."""
        return str(getattr(self, f"{engine}_addr"))

    def sqlite_path(self, engine: str) -> Path:
        """The SQLite file of an engine under data_dir."""
        return self.data_dir / f"{engine}.sqlite3"
