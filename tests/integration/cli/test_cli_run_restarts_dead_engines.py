"""`memmesh run` restarts an engine killed with SIGKILL on the same address within 5 s; `memmesh
status` counts the restart; the gateway reaches the restarted engine again; Ctrl-C then stops
every engine and restarts none."""

from __future__ import annotations

import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as gateway_grpc
from memmesh.runtime.settings import ENGINE_NAMES
from memmesh.runtime.supervisor import STATE_FILE, built_engines
from memmesh.runtime.timeconv import timestamp_of

pytestmark = pytest.mark.skipif(
    not {"gateway", "thread_store"} <= set(built_engines()),
    reason="needs the gateway and the thread store",
)

VICTIM = "thread_store"  # every Ingest goes through it first
TENANT, TENANT_KEY = "heal", "heal-key"
START_TIMEOUT_S = 90.0


def _memmesh(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memmesh.cli.main", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def _read_banner(run: subprocess.Popen[str]) -> None:
    """Wait for `memmesh run` to print the line that follows a started mesh."""
    assert run.stdout is not None
    fd, output = run.stdout.fileno(), b""
    deadline = time.monotonic() + START_TIMEOUT_S
    # os.read, not readline: lines buffered inside the file object would not wake select.
    while b"Ctrl-C" not in output:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"the mesh was not up within {START_TIMEOUT_S} s"
        if select.select([fd], [], [], remaining)[0]:
            chunk = os.read(fd, 4096)
            assert chunk, f"memmesh run exited with {run.wait()} before the mesh was up"
            output += chunk


def _listen_port(taken: set[int]) -> int:
    """A free port below the ephemeral range, so no client socket or port-0 server elsewhere on
    the machine takes it in the half minute before (and again while) the engine binds it."""
    while True:
        port = random.randrange(20_000, 32_000)
        if port in taken:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            taken.add(port)
            return port


def _health(addr: str) -> str:
    with grpc.insecure_channel(addr) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=0.25
            )
        except grpc.RpcError:
            return "DOWN"
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


@pytest.fixture
def mesh_env(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "MEMMESH_DATA_DIR": str(tmp_path),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_LOG_LEVEL": "WARNING",
        "MEMMESH_GATEWAY_TENANT_KEYS": json.dumps({TENANT: TENANT_KEY}),
        # Proves healing, not latency: a loaded machine must not turn a Brief into an empty bundle.
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "3000",
    }
    taken: set[int] = set()
    for name in ENGINE_NAMES:
        env[f"MEMMESH_{name.upper()}_ADDR"] = f"127.0.0.1:{_listen_port(taken)}"
    return env


@pytest.fixture
def memmesh_run(mesh_env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    command = [sys.executable, "-m", "memmesh.cli.main", "run"]
    run = subprocess.Popen(command, env=mesh_env, stdout=subprocess.PIPE, text=True)
    try:
        _read_banner(run)
        yield run
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            run.wait(timeout=60)


def test_a_killed_engine_is_serving_again_within_5_s_counted_by_status_and_stopped_by_ctrl_c(
    memmesh_run: subprocess.Popen[str], mesh_env: dict[str, str]
) -> None:
    state_path = Path(mesh_env["MEMMESH_DATA_DIR"]) / STATE_FILE
    victim = json.loads(state_path.read_text())["engines"][VICTIM]
    addr = mesh_env[f"MEMMESH_{VICTIM.upper()}_ADDR"]
    assert victim["addr"] == addr and victim["restarts"] == 0

    os.kill(victim["pid"], signal.SIGKILL)
    killed_at = time.monotonic()
    while _health(addr) != "SERVING":
        assert time.monotonic() - killed_at < 5.0, f"{VICTIM} was not SERVING again within 5 s"
        time.sleep(0.05)

    restarted = json.loads(state_path.read_text())["engines"][VICTIM]
    assert restarted["pid"] != victim["pid"] and restarted["last_exit"] == -signal.SIGKILL
    status = _memmesh("status", env=mesh_env)
    assert status.returncode == 0, status.stdout
    lines = {line.split()[0]: line for line in status.stdout.strip().splitlines()}
    assert "restarts=1 (last exit -9)" in lines[VICTIM] and lines[VICTIM].endswith("SERVING")
    assert all("restarts=0" in line for name, line in lines.items() if name != VICTIM)

    # The gateway's channel to the old address reaches the new process.
    with grpc.insecure_channel(mesh_env["MEMMESH_GATEWAY_ADDR"]) as channel:
        gateway = gateway_grpc.GatewayServiceStub(channel)
        metadata = [("authorization", f"Bearer {TENANT_KEY}")]
        scope = scope_pb2.UserScope(tenant_id=TENANT, user_id=f"u-{uuid.uuid4().hex[:12]}")
        now_us = time.time_ns() // 1000
        text = "my sister Sarah lives in Chicago"
        turn = memory_pb2.Turn(
            turn_id="t1",
            session_id="s1",
            role=memory_pb2.ROLE_USER,
            text=text,
            time=timestamp_of(now_us),
        )
        ingested = gateway.Ingest(
            gateway_pb.IngestRequest(scope=scope, turn=turn), metadata=metadata, timeout=10
        )
        assert ingested.ok
        brief = gateway.Brief(
            gateway_pb.BriefRequest(
                scope=scope,
                session_id="s1",
                now=timestamp_of(now_us + 1_000_000),
                query="where does my sister live?",
                channel=memory_pb2.CHANNEL_VOICE,
                identity_verified=True,
            ),
            metadata=metadata,
            timeout=10,
        )
        assert not brief.reason_code, brief.reason_code
        assert text in [item.text for item in brief.bundle.working_memory]

    # Ctrl-C stops every engine, the restarted one too, and restarts none.
    pids = [engine["pid"] for engine in json.loads(state_path.read_text())["engines"].values()]
    memmesh_run.send_signal(signal.SIGINT)
    assert memmesh_run.wait(timeout=60) == 0
    assert memmesh_run.stdout is not None and "stopped." in memmesh_run.stdout.read()
    assert not state_path.exists()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    status = _memmesh("status", "--timeout", "0.3", env=mesh_env)
    assert status.returncode == 1 and "restarts=-" in status.stdout and "DOWN" in status.stdout
