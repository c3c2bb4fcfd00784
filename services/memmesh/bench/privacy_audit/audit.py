"""One backend's audit: play the script through a fresh mesh, scan what it left."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from memmesh.bench.privacy_audit import driver, scanner
from memmesh.bench.privacy_audit.generator import Script
from memmesh.testing.postgres import new_database_name, scratch_database

POSTGRES_ADMIN_URL = os.environ.get(
    "MEMMESH_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("MEMMESH_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
BACKENDS = ("sqlite", "postgres")


def audit_backend(
    script: Script,
    backend: str,
    *,
    concurrency: int = 4,
    settle_s: float = 5.0,
    time_limit_s: float = float("inf"),
    server_wal: bool = True,
) -> dict[str, object]:
    """Run the script through a fresh mesh on one backend ("sqlite", or "postgres" with
    Redis) and scan what it left (PostgreSQL's WAL too, with `server_wal`); the scratch
    PostgreSQL database is dropped after."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}, expected one of {BACKENDS}")
    with tempfile.TemporaryDirectory(prefix="memmesh-audit-") as work:
        if backend == "sqlite":
            run = driver.run(
                script,
                "sqlite",
                Path(work),
                concurrency=concurrency,
                settle_s=settle_s,
                time_limit_s=time_limit_s,
            )
            return scanner.scan(run, script, server_wal=server_wal)
        with scratch_database(POSTGRES_ADMIN_URL, new_database_name("memmesh_audit")) as url:
            run = driver.run(
                script,
                "postgres",
                Path(work),
                postgres_url=url,
                redis_url=REDIS_URL,
                concurrency=concurrency,
                settle_s=settle_s,
                time_limit_s=time_limit_s,
            )
            return scanner.scan(run, script, server_wal=server_wal)
