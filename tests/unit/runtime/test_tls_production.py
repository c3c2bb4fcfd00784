"""MEMMESH_ENV=production: an engine process refuses to start (a clear message on stderr,
exit status 78) with the published internal token, plaintext transport or the `demo-key`
tenant key, and starts once each is fixed; development still runs plaintext with the
defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memmesh.cli.main import main as memmesh
from memmesh.runtime import tls
from memmesh.runtime.engine import EXIT_REFUSED, READY_PREFIX, production_problems
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import free_port

STRONG_TOKEN = "a-long-random-production-token-0123456789"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("certs")
    tls.make_certificates(directory, ["ledger", "gateway"])
    return directory


def _start(engine: str, env: dict[str, str], tmp_path: Path) -> tuple[int | None, str]:
    """Start an engine; (exit status, stderr) if it exits, (None, "") once it is ready."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MEMMESH_", "OTEL_"))}
    environment |= {
        "MEMMESH_DATA_DIR": str(tmp_path),
        "MEMMESH_HOST": "127.0.0.1",
        "MEMMESH_PORT": str(free_port()),
        "MEMMESH_LOG_LEVEL": "WARNING",
        **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", f"memmesh.engines.{engine}"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    line = process.stdout.readline()
    if line.startswith(READY_PREFIX):
        process.terminate()
        process.wait(timeout=15)
        return None, ""
    code = process.wait(timeout=30)
    return code, process.stderr.read()


def test_development_defaults_have_no_production_problem() -> None:
    assert production_problems(MeshSettings(env="development", tls_dir=None)) == []


def test_production_names_each_problem() -> None:
    problems = production_problems(MeshSettings(env="production", tls_dir=None))
    assert any("internal token" in p for p in problems)
    assert any("plaintext" in p for p in problems)


def test_an_engine_refuses_the_default_token_and_plaintext(tmp_path: Path) -> None:
    code, stderr = _start("ledger", {"MEMMESH_ENV": "production"}, tmp_path)
    assert code == EXIT_REFUSED
    assert "refusing to start with MEMMESH_ENV=production" in stderr
    assert "published development internal token" in stderr and "plaintext" in stderr


def test_an_engine_refuses_plaintext_even_with_its_own_token(tmp_path: Path) -> None:
    env = {"MEMMESH_ENV": "production", "MEMMESH_INTERNAL_TOKEN": STRONG_TOKEN}
    code, stderr = _start("ledger", env, tmp_path)
    assert code == EXIT_REFUSED and "plaintext" in stderr and "token" not in stderr


def test_an_engine_starts_in_production_with_tls_and_its_own_token(
    tmp_path: Path, certs: Path
) -> None:
    env = {
        "MEMMESH_ENV": "production",
        "MEMMESH_INTERNAL_TOKEN": STRONG_TOKEN,
        "MEMMESH_TLS_DIR": str(certs),
    }
    code, stderr = _start("ledger", env, tmp_path)
    assert code is None, stderr


def test_the_gateway_refuses_the_demo_tenant_key(tmp_path: Path, certs: Path) -> None:
    env = {
        "MEMMESH_ENV": "production",
        "MEMMESH_INTERNAL_TOKEN": STRONG_TOKEN,
        "MEMMESH_TLS_DIR": str(certs),
    }
    code, stderr = _start("gateway", env, tmp_path)
    assert code == EXIT_REFUSED and "published tenant key of 'demo'" in stderr
    env["MEMMESH_GATEWAY_TENANT_KEYS"] = '{"acme": "a-real-tenant-key-9f8e7d6c"}'
    code, stderr = _start("gateway", env, tmp_path)
    assert code is None, stderr


def test_memmesh_run_refuses_before_starting_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMMESH_ENV", "production")
    monkeypatch.delenv("MEMMESH_TLS_DIR", raising=False)
    assert memmesh(["run"]) == EXIT_REFUSED
    assert "refusing to start with MEMMESH_ENV=production" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("endpoint", "insecure", "refused"),
    [
        ("http://collector.example:4317", None, True),
        ("collector.example:4317", True, True),
        ("https://collector.example:4317", None, False),
        ("collector.example:4317", None, False),  # no scheme, not loopback: TLS
        ("http://127.0.0.1:4317", None, False),  # a collector beside the process
        ("localhost:4317", True, False),
    ],
)
def test_production_refuses_telemetry_that_leaves_the_host_in_plaintext(
    certs: Path, endpoint: str, insecure: bool | None, refused: bool
) -> None:
    settings = MeshSettings(
        env="production",
        internal_token=STRONG_TOKEN,
        tls_dir=certs,
        otlp_endpoint=endpoint,
        otlp_insecure=insecure,
    )
    problems = production_problems(settings)
    assert problems == (
        [
            "telemetry export to collector.example is plaintext (use an https:// endpoint or "
            "MEMMESH_OTLP_CA_FILE, or a collector on loopback)"
        ]
        if refused
        else []
    )
    # Development exports wherever it is told.
    assert production_problems(settings.model_copy(update={"env": "development"})) == []


def test_an_engine_refuses_a_plaintext_remote_collector(tmp_path: Path, certs: Path) -> None:
    env = {
        "MEMMESH_ENV": "production",
        "MEMMESH_INTERNAL_TOKEN": STRONG_TOKEN,
        "MEMMESH_TLS_DIR": str(certs),
        "MEMMESH_OTLP_ENDPOINT": "http://collector.example:4317",
    }
    code, stderr = _start("ledger", env, tmp_path)
    assert code == EXIT_REFUSED and "telemetry export to collector.example is plaintext" in stderr
