"""`memmesh run` starts every built engine as its own process; `memmesh status` sees them SERVING."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memmesh.runtime.settings import ENGINE_NAMES
from memmesh.runtime.supervisor import built_engines, free_ports


def test_run_serves_every_built_engine_and_status_reports_them(tmp_path: Path) -> None:
    env = {**os.environ, "MEMMESH_DATA_DIR": str(tmp_path)}
    for name, port in zip(ENGINE_NAMES, free_ports(len(ENGINE_NAMES)), strict=True):
        env[f"MEMMESH_{name.upper()}_ADDR"] = f"127.0.0.1:{port}"
    run = subprocess.Popen(
        [sys.executable, "-m", "memmesh.cli.main", "run"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert run.stdout is not None
        banner = [run.stdout.readline() for _ in range(len(built_engines()) + 2)]
        assert banner[0].startswith("memmesh is running")
        status = subprocess.run(
            [sys.executable, "-m", "memmesh.cli.main", "status"],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert status.returncode == 0, status.stdout
        lines = status.stdout.strip().splitlines()
        assert len(lines) == len(built_engines())
        assert all(line.endswith("SERVING") for line in lines)
    finally:
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=30) == 0
    deadline = time.monotonic() + 10
    status = subprocess.run(
        [sys.executable, "-m", "memmesh.cli.main", "status", "--timeout", "0.3"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert status.returncode == 1 and "DOWN" in status.stdout
    assert time.monotonic() < deadline
