"""Starts engines as separate processes, learns their addresses, stops them (make run, tests),
and under `memmesh run` restarts an engine that dies, on the same address, with backoff."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from memmesh.runtime.engine import READY_PREFIX
from memmesh.runtime.metrics import Instruments, instruments, metrics_enabled
from memmesh.runtime.settings import ENGINE_NAMES

START_TIMEOUT_S = 30.0
# Where `memmesh run` writes what it supervises (under the data dir) for `memmesh status`.
STATE_FILE = "mesh-state.json"

log = logging.getLogger("memmesh.supervisor")


def _is_built(name: str) -> bool:
    return importlib.util.find_spec(f"memmesh.engines.{name}") is not None and (
        importlib.util.find_spec(f"memmesh.engines.{name}.main") is not None
    )


def built_engines() -> list[str]:
    """Engines whose code exists (their contracts exist for all); MEMMESH_ENGINES narrows the set."""
    wanted = [n for n in os.environ.get("MEMMESH_ENGINES", "").split(",") if n]
    return [name for name in ENGINE_NAMES if _is_built(name) and (not wanted or name in wanted)]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """Distinct ports free right now on host (engines get fixed ports before any starts,
    since some call each other in both directions). Every probe stays bound until all are
    chosen: a probe closed early lets the kernel hand the same port out again."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind((host, 0))
        return [int(probe.getsockname()[1]) for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def free_port(host: str = "127.0.0.1") -> int:
    """One port free right now on host."""
    return free_ports(1, host)[0]


# A mesh on ports it chose itself starts again on new ports when an engine exits early.
START_ATTEMPTS = 3


class EngineExited(RuntimeError):
    """An engine process ended before printing its ready line."""


@dataclass
class EngineProcess:
    name: str
    addr: str
    process: subprocess.Popen[str]


@dataclass
class Mesh:
    """A set of engine processes on loopback sharing one environment."""

    engines: list[str]
    env: Mapping[str, str] = field(default_factory=dict)
    ports: Mapping[str, int] | None = None
    host: str = "127.0.0.1"
    running: dict[str, EngineProcess] = field(default_factory=dict)
    addrs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        given = dict(self.ports or {})
        unported = [name for name in self.engines if name not in given]
        given.update(zip(unported, free_ports(len(unported), self.host), strict=True))
        for name in self.engines:
            self.addrs[name] = f"{self.host}:{given[name]}"

    def environment(self, name: str) -> dict[str, str]:
        env = {**os.environ, **self.env}
        for other, addr in self.addrs.items():
            env[f"MEMMESH_{other.upper()}_ADDR"] = addr
        env["MEMMESH_HOST"] = self.host
        env["MEMMESH_SUPERVISOR_PID"] = str(os.getpid())
        env["MEMMESH_PORT"] = self.addrs[name].rsplit(":", 1)[1]
        return env

    def spawn(self, name: str) -> EngineProcess:
        """Start one engine on its address without waiting for it to be ready."""
        process = subprocess.Popen(
            [sys.executable, "-m", f"memmesh.engines.{name}"],
            env=self.environment(name),
            stdout=subprocess.PIPE,
            stderr=None,
            text=True,
        )
        self.running[name] = EngineProcess(name, self.addrs[name], process)
        return self.running[name]

    def start(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """Start the engines (all by default) and wait until each has printed its ready line."""
        for name in list(names or self.engines):
            self.spawn(name)
        for name in list(names or self.engines):
            self._wait_ready(self.running[name])
        return dict(self.addrs)

    def _wait_ready(self, engine: EngineProcess) -> None:
        stdout = engine.process.stdout
        assert stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while time.monotonic() < deadline:
                if not selector.select(timeout=max(deadline - time.monotonic(), 0)):
                    break
                line = stdout.readline()
                if not line:
                    raise EngineExited(
                        f"{engine.name} exited with {engine.process.wait()} before it was ready"
                    )
                if line.startswith(READY_PREFIX):
                    return
            raise RuntimeError(f"{engine.name} was not ready within {START_TIMEOUT_S} s")
        finally:
            selector.close()

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send a signal to one engine and wait for it to exit."""
        engine = self.running.pop(name)
        engine.process.send_signal(sig)
        engine.process.wait(timeout=15)

    def pause(self, name: str) -> None:
        """Freeze an engine (SIGSTOP): it holds its port but answers nothing, like a hung process."""
        self.running[name].process.send_signal(signal.SIGSTOP)

    def resume(self, name: str) -> None:
        self.running[name].process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """SIGTERM every engine (graceful), then SIGKILL what has not exited."""
        for engine in self.running.values():
            engine.process.send_signal(signal.SIGCONT)
            engine.process.terminate()
        for engine in self.running.values():
            try:
                engine.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                engine.process.kill()
                engine.process.wait()
        self.running.clear()

    def __enter__(self) -> Mesh:
        for attempt in range(START_ATTEMPTS):
            try:
                self.start()
                return self
            except EngineExited:
                self.stop()
                # Another process may have taken a chosen port between probe and bind;
                # only ports this mesh picked itself can be picked again.
                if self.ports or attempt == START_ATTEMPTS - 1:
                    raise
                self.running.clear()
                self.addrs.clear()
                self.__post_init__()
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Backoff:
    """The wait before restarting an engine that exited: `initial_s`, doubling up to `cap_s`
    while it keeps dying, back to `initial_s` once a run has lasted `reset_after_s`."""

    initial_s: float = 0.2
    factor: float = 2.0
    cap_s: float = 10.0
    reset_after_s: float = 30.0
    failures: int = 0

    def delay_after(self, ran_for_s: float) -> float:
        """The delay before the next start of an engine whose last run lasted `ran_for_s`."""
        if ran_for_s >= self.reset_after_s:
            self.failures = 0
        delay = min(self.cap_s, self.initial_s * self.factor**self.failures)
        self.failures += 1
        return delay


class SupervisedProcess(Protocol):
    """What the supervisor needs of a process (subprocess.Popen has it)."""

    @property
    def pid(self) -> int: ...

    @property
    def stdout(self) -> IO[str] | None: ...

    def poll(self) -> int | None: ...


@dataclass
class SupervisedEngine:
    """One engine as the supervisor sees it."""

    name: str
    addr: str
    process: SupervisedProcess
    started_at: float
    backoff: Backoff
    ready: bool = True
    restarts: int = 0
    last_exit: int | None = None
    # Set while the engine waits out its backoff after an exit.
    restart_at: float | None = None
    output: str = ""

    @property
    def state(self) -> str:
        if self.restart_at is not None:
            return "backoff"
        return "running" if self.ready else "starting"

    def as_json(self) -> dict[str, object]:
        return {
            "addr": self.addr,
            "pid": self.process.pid,
            "state": self.state,
            "restarts": self.restarts,
            "last_exit": self.last_exit,
        }


def describe_exit(code: int) -> str:
    """`code 1`, or `code -9 (SIGKILL)` for a process ended by a signal."""
    if code < 0:
        try:
            return f"code {code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"code {code}"


class Supervisor:
    """Restarts engines that exit, on the same address (peers' channels reconnect to it), after
    a backoff, and keeps their pid, restarts and last exit in a JSON file for `memmesh status`."""

    def __init__(
        self,
        spawn: Callable[[str], SupervisedProcess],
        state_path: Path | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        backoff: Callable[[], Backoff] = Backoff,
        meters: Instruments | None = None,
    ) -> None:
        self._spawn = spawn
        # Explicit instruments are always recorded (tests); the process's only when exported.
        self._meters = meters
        self._state_path = state_path
        self._clock = clock
        self._backoff = backoff
        self.engines: dict[str, SupervisedEngine] = {}

    def adopt(self, name: str, addr: str, process: SupervisedProcess) -> None:
        """Supervise an engine that is already running and ready."""
        self.engines[name] = SupervisedEngine(name, addr, process, self._clock(), self._backoff())
        self._write_state()

    def run(self, should_stop: Callable[[], bool], tick_s: float = 0.1) -> None:
        """Supervise until `should_stop()`, checked after every wait and before any restart."""
        while True:
            self.watch(tick_s)
            if should_stop():
                return
            self.check()

    def check(self) -> None:
        """Note engines that exited and restart those whose backoff is over."""
        now = self._clock()
        changed = False
        for engine in self.engines.values():
            if engine.restart_at is None:
                code = engine.process.poll()
                if code is None:
                    continue
                delay = engine.backoff.delay_after(now - engine.started_at)
                engine.last_exit, engine.restart_at, changed = code, now + delay, True
                log.warning(
                    "%s (pid %d) exited with %s after %.1f s; restart %d in %.1f s",
                    engine.name,
                    engine.process.pid,
                    describe_exit(code),
                    now - engine.started_at,
                    engine.restarts + 1,
                    delay,
                )
            elif now >= engine.restart_at:
                engine.process = self._spawn(engine.name)
                engine.started_at, engine.restart_at, engine.ready, engine.output = (
                    now,
                    None,
                    False,
                    "",
                )
                engine.restarts += 1
                changed = True
                meters = self._meters or (instruments() if metrics_enabled() else None)
                if meters is not None:
                    meters.engine_restarts.add(1, {"engine": engine.name})
        if changed:
            self._write_state()

    def watch(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for restarted engines' ready lines (draining their output)."""
        starting = {
            engine.process.stdout.fileno(): engine
            for engine in self.engines.values()
            if not engine.ready and engine.restart_at is None and engine.process.stdout is not None
        }
        if not starting:
            time.sleep(timeout_s)
            return
        readable, _, _ = select.select(list(starting), [], [], timeout_s)
        for fd in readable:
            engine = starting[fd]
            chunk = os.read(fd, 4096).decode(errors="replace")
            engine.output += chunk
            if any(line.startswith(READY_PREFIX) for line in engine.output.splitlines()):
                engine.ready, engine.output = True, ""
                log.info(
                    "%s is serving again on %s (restart %d)",
                    engine.name,
                    engine.addr,
                    engine.restarts,
                )
                self._write_state()
            elif not chunk:
                engine.ready = True  # end of output: the exit is noted by the next check
            engine.output = engine.output[-4096:]

    def close(self) -> None:
        """Forget the state file (the mesh has stopped)."""
        if self._state_path is not None:
            self._state_path.unlink(missing_ok=True)

    def _write_state(self) -> None:
        if self._state_path is None:
            return
        state = {
            "supervisor_pid": os.getpid(),
            "engines": {n: e.as_json() for n, e in self.engines.items()},
        }
        self._state_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self._state_path.with_name(f".{self._state_path.name}.{os.getpid()}")
        temporary.write_text(json.dumps(state, indent=1), encoding="utf-8")
        # Atomic: a reader sees the old file or the new one, never half of one.
        os.replace(temporary, self._state_path)


def read_supervisor_state(state_path: Path) -> dict[str, dict[str, object]]:
    """Per-engine state written by a live `memmesh run` (empty if none runs)."""
    try:
        state = json.loads(state_path.read_text(encoding="utf-8"))
        os.kill(int(state["supervisor_pid"]), 0)
    except PermissionError:
        pass  # the supervisor lives but belongs to another user
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    engines = state.get("engines")
    return engines if isinstance(engines, dict) else {}
