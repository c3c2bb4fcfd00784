"""Runs an audit script through the gateway of a real mesh (every built engine as its own
process) on one storage configuration, keeping everything the scanner needs: the data
directory, every engine's stdout and stderr, every OTLP span and metric export, every Brief.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import grpc
from google.protobuf import text_format

from memmesh.bench.privacy_audit.generator import Script, UserScript
from memmesh.client.gateway import GatewayClient
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.runtime.supervisor import EngineProcess, Mesh, built_engines
from memmesh.testing.otlp_collector import OtlpCollector

TENANT_KEY = "audit-key"
INTERNAL_TOKEN = "audit-internal-token"


def forget_everything_command() -> str | None:
    """The `UserCommand` of "forget everything about me", when the gateway has one."""
    names = gateway_pb.UserCommand.keys()
    return "FORGET_EVERYTHING" if "USER_COMMAND_FORGET_EVERYTHING" in names else None


@dataclass
class LoggedMesh(Mesh):
    """A mesh whose engines' stdout and stderr go to one file each under `log_dir`."""

    log_dir: Path = Path(".")
    _drains: list[threading.Thread] = field(default_factory=list)
    _files: list[IO[str]] = field(default_factory=list)

    def spawn(self, name: str) -> EngineProcess:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        stderr = (self.log_dir / f"{name}.stderr.log").open("a")
        self._files.append(stderr)
        process = subprocess.Popen(
            [sys.executable, "-m", f"memmesh.engines.{name}"],
            env=self.environment(name),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        self.running[name] = EngineProcess(name, self.addrs[name], process)
        return self.running[name]

    def start(self, names: list[str] | None = None) -> dict[str, str]:  # type: ignore[override]  # narrower argument, same use
        addrs = super().start(names)
        for engine in list(self.running.values()):
            self._drain(engine)
        return addrs

    def _drain(self, engine: EngineProcess) -> None:
        """Copy what the engine prints after its ready line to its stdout log."""
        out = (self.log_dir / f"{engine.name}.stdout.log").open("a")
        self._files.append(out)
        stream = engine.process.stdout
        assert stream is not None

        def copy() -> None:
            for line in stream:
                out.write(line)
            out.flush()

        thread = threading.Thread(target=copy, daemon=True)
        thread.start()
        self._drains.append(thread)

    def stop(self) -> None:
        super().stop()
        for thread in self._drains:
            thread.join(timeout=5)
        for handle in self._files:
            handle.close()


START_ATTEMPTS = 3
# The longest wait after the last call for the users' queued effects to be delivered.
DRAIN_LIMIT_S = 300.0


def _start_mesh(env: dict[str, str], log_dir: Path) -> LoggedMesh:
    """Every built engine, started; on a loaded machine an engine may miss its start
    deadline, so a failed start is retried on fresh ports."""
    for attempt in range(START_ATTEMPTS):
        mesh = LoggedMesh(built_engines(), env=env, log_dir=log_dir)
        try:
            mesh.__enter__()
            return mesh
        except RuntimeError:
            if attempt == START_ATTEMPTS - 1:
                raise
            time.sleep(5)
    raise AssertionError("unreachable")


@dataclass
class BriefRecord:
    user: UserScript
    step_index: int
    probe: str
    text: str  # the whole response in protobuf text format (UTF-8 as is)
    degraded: bool


@dataclass
class Run:
    """What one backend's run left behind, for the scanner."""

    label: str
    data_dir: Path
    log_dir: Path
    postgres_url: str | None
    redis_url: str | None
    span_exports: list[bytes]
    metric_exports: list[bytes]
    briefs: list[BriefRecord]
    errors: Counter[str]
    # The first error message of each kind of failed call.
    error_details: dict[str, str] = field(default_factory=dict)
    # Users whose script was played (all, unless a time limit stopped the run early).
    users_played: int = 0
    # Mean latency of each kind of call, milliseconds.
    mean_ms: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    # The tenant the run's users belonged to (another run's keys are not this run's copies).
    tenant: str = ""
    # How long the queued effects took to drain after the last call, and the users whose
    # effects were still queued when the wait gave up.
    drain_seconds: float = 0.0
    users_undrained: int = 0


async def _play(
    client: GatewayClient,
    user: UserScript,
    briefs: list[BriefRecord],
    errors: Counter[str],
    error_details: dict[str, str],
    busy: dict[str, float],
) -> None:
    for index, step in enumerate(user.steps):
        started = time.perf_counter()
        try:
            if step.kind == "ingest":
                await client.ingest(
                    user.user_id,
                    step.session_id,
                    f"{step.session_id}-t{index:03d}",
                    step.role,
                    step.text,
                    step.time_us,
                    timeout=30,
                )
            elif step.kind == "command":
                await client.command(
                    user.user_id,
                    step.session_id,
                    step.command,
                    step.time_us,
                    step.target,
                    timeout=30,
                )
            else:
                response = await client.brief(
                    user.user_id, step.session_id, step.time_us, step.text, timeout=30
                )
                briefs.append(
                    BriefRecord(
                        user,
                        index,
                        step.probe,
                        text_format.MessageToString(response, as_utf8=True),
                        response.degraded,
                    )
                )
        except grpc.aio.AioRpcError as error:
            key = f"{step.kind}:{step.command or step.probe or step.role}:{error.code().name}"
            errors[key] += 1
            error_details.setdefault(key, (error.details() or "")[:200])
        finally:
            busy[step.kind] += time.perf_counter() - started


async def _drive(
    script: Script,
    gateway: str,
    tenant: str,
    concurrency: int,
    errors: Counter[str],
    error_details: dict[str, str],
    busy: dict[str, float],
    played: list[UserScript],
    deadline: float,
) -> list[BriefRecord]:
    briefs: list[BriefRecord] = []
    queue = list(script.users)

    async def worker() -> None:
        async with GatewayClient(gateway, TENANT_KEY, tenant_id=tenant) as client:
            while queue and time.monotonic() < deadline:
                user = queue.pop(0)
                played.append(user)
                await _play(client, user, briefs, errors, error_details, busy)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return briefs


async def _drain(gateway: str, tenant: str, played: list[UserScript], limit_s: float) -> int:
    """Wait until no played user has an effect queued in the gateway or the extractor (the
    scan then judges what the mesh keeps, not what it has yet to deliver), at most `limit_s`;
    how many users still had effects queued at the end."""
    deadline = time.monotonic() + limit_s
    waiting = [user.user_id for user in played]
    async with GatewayClient(
        gateway, TENANT_KEY, tenant_id=tenant, internal_token=INTERNAL_TOKEN
    ) as client:
        while waiting:
            still: list[str] = []
            for user_id in waiting:
                debug = await client.debug_user(user_id, timeout=10.0)
                if any("pending:" in entry for entry in debug.effects):
                    still.append(user_id)
            waiting = still
            if not waiting or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
    return len(waiting)


def run(
    script: Script,
    label: str,
    work_dir: Path,
    *,
    postgres_url: str | None = None,
    redis_url: str | None = None,
    concurrency: int = 4,
    settle_s: float = 5.0,
    time_limit_s: float = float("inf"),
) -> Run:
    """Play the script through a mesh on SQLite (no URLs) or PostgreSQL (+ Redis), then stop
    the mesh (gracefully) so everything it holds is at rest where it wrote it."""
    data_dir, log_dir = work_dir / "data", work_dir / "logs"
    data_dir.mkdir(parents=True, exist_ok=True)
    tenant = f"audit-{uuid.uuid4().hex[:8]}"
    # A real OTLP/gRPC receiver on loopback that keeps every export request whole.
    sink = OtlpCollector()
    errors: Counter[str] = Counter()
    error_details: dict[str, str] = {}
    busy: dict[str, float] = defaultdict(float)
    played: list[UserScript] = []
    drain_s, undrained = [0.0], [0]
    started = time.perf_counter()

    async def main() -> list[BriefRecord]:
        endpoint = await sink.start()
        try:
            return await play(endpoint)
        finally:
            await sink.stop()

    async def play(endpoint: str) -> list[BriefRecord]:
        env = {
            "MEMMESH_DATA_DIR": str(data_dir),
            "MEMMESH_STORAGE_URL": postgres_url or "sqlite",
            "MEMMESH_INTERNAL_TOKEN": INTERNAL_TOKEN,
            "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{tenant}": "{TENANT_KEY}"}}',
            "MEMMESH_OTLP_ENDPOINT": endpoint,
            # Metrics every second, so even a short run exports (and is scanned) several times.
            "MEMMESH_OTLP_METRIC_INTERVAL_MS": "1000",
            "MEMMESH_LOG_LEVEL": os.environ.get("MEMMESH_AUDIT_LOG_LEVEL", "INFO"),
            # The audit judges content, not latency: a loaded machine must not turn Briefs
            # into empty (and so trivially clean) degraded bundles. A Brief after a forget
            # waits for the forget's effects for half its budget and fails closed after: on a
            # loaded machine 2.5 s was not always enough, so the Brief gets the Ingest's 20 s.
            "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "20000",
            "MEMMESH_GATEWAY_INGEST_BUDGET_MS": "20000",
            "MEMMESH_GATEWAY_CONTROL_BUDGET_MS": "20000",
        }
        if redis_url:
            env["MEMMESH_REDIS_URL"] = redis_url
        mesh = await asyncio.to_thread(_start_mesh, env, log_dir)
        try:
            briefs = await _drive(
                script,
                mesh.addrs["gateway"],
                tenant,
                concurrency,
                errors,
                error_details,
                busy,
                played,
                time.monotonic() + time_limit_s,
            )
            drain_started = time.monotonic()
            undrained[0] = await _drain(mesh.addrs["gateway"], tenant, played, DRAIN_LIMIT_S)
            drain_s[0] = time.monotonic() - drain_started
            # Span batches and the reclaim passes get time to land before the mesh stops.
            await asyncio.sleep(settle_s)
        finally:
            await asyncio.to_thread(mesh.stop)
            await asyncio.sleep(0.5)  # the last span batches, flushed on stop
        return briefs

    briefs = asyncio.run(main())
    return Run(
        label=label,
        tenant=tenant,
        data_dir=data_dir,
        log_dir=log_dir,
        postgres_url=postgres_url,
        redis_url=redis_url,
        span_exports=sink.span_exports,
        metric_exports=sink.metric_exports,
        briefs=briefs,
        errors=errors,
        error_details=error_details,
        mean_ms={
            kind: round(busy[kind] * 1000 / count, 1)
            for kind, count in Counter(s.kind for u in played for s in u.steps).items()
        },
        users_played=len(played),
        seconds=round(time.perf_counter() - started, 1),
        drain_seconds=round(drain_s[0], 1),
        users_undrained=undrained[0],
    )
