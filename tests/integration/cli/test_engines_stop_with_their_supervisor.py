"""An engine whose supervisor is killed outright (SIGKILL: no chance to stop its engines) stops
by itself within seconds instead of holding its port and data files as an orphan; one whose
supervisor still runs keeps serving."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memmesh.runtime.server import SUPERVISOR_POLL_S

# A supervisor of one engine: starts the ledger, prints its pid, then waits to be killed.
SUPERVISOR = textwrap.dedent(
    """
    import sys, time
    from memmesh.runtime.supervisor import Mesh
    mesh = Mesh(["ledger"], env={"MEMMESH_DATA_DIR": sys.argv[1], "MEMMESH_LOG_LEVEL": "WARNING"})
    mesh.start()
    print(mesh.running["ledger"].process.pid, flush=True)
    time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def supervised_engine(tmp_path: Path):
    supervisor = subprocess.Popen(
        [sys.executable, "-c", SUPERVISOR, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert supervisor.stdout is not None
    engine_pid = int(supervisor.stdout.readline())
    yield supervisor, engine_pid
    supervisor.kill()
    supervisor.wait()
    if _alive(engine_pid):
        os.kill(engine_pid, signal.SIGKILL)


def test_an_engine_stops_when_its_supervisor_is_killed(supervised_engine) -> None:
    supervisor, engine_pid = supervised_engine
    time.sleep(2 * SUPERVISOR_POLL_S)
    assert _alive(engine_pid), "the engine stopped while its supervisor ran"
    supervisor.send_signal(signal.SIGKILL)
    supervisor.wait()
    deadline = time.monotonic() + 5.0
    while _alive(engine_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(engine_pid), "the engine outlived its supervisor by more than 5 s"
