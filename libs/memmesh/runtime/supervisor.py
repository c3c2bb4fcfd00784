"""Starts engines as separate processes, learns their addresses, stops them (make run, tests)."""

from __future__ import annotations

import importlib.util
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from memmesh.runtime.engine import READY_PREFIX
from memmesh.runtime.settings import ENGINE_NAMES

START_TIMEOUT_S = 30.0


def _is_built(name: str) -> bool:
    return importlib.util.find_spec(f"memmesh.engines.{name}") is not None and (
        importlib.util.find_spec(f"memmesh.engines.{name}.main") is not None
    )


def built_engines() -> list[str]:
    """Engines whose code exists (their contracts exist for all); MEMMESH_ENGINES narrows the set."""
    wanted = [n for n in os.environ.get("MEMMESH_ENGINES", "").split(",") if n]
    return [name for name in ENGINE_NAMES if _is_built(name) and (not wanted or name in wanted)]


def free_port(host: str = "127.0.0.1") -> int:
    """A port free right now on host (engines get fixed ports before any starts, since
    some call each other in both directions)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


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
        for name in self.engines:
            port = self.ports[name] if self.ports and name in self.ports else free_port(self.host)
            self.addrs[name] = f"{self.host}:{port}"

    def environment(self, name: str) -> dict[str, str]:
        env = {**os.environ, **self.env}
        for other, addr in self.addrs.items():
            env[f"MEMMESH_{other.upper()}_ADDR"] = addr
        env["MEMMESH_HOST"] = self.host
        env["MEMMESH_PORT"] = self.addrs[name].rsplit(":", 1)[1]
        return env

    def start(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """Start the engines (all by default) and wait until each has printed its ready line."""
        for name in list(names or self.engines):
            process = subprocess.Popen(
                [sys.executable, "-m", f"memmesh.engines.{name}"],
                env=self.environment(name),
                stdout=subprocess.PIPE,
                stderr=None,
                text=True,
            )
            self.running[name] = EngineProcess(name, self.addrs[name], process)
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
                    raise RuntimeError(f"{engine.name} exited with {engine.process.wait()} before it was ready")
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
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
