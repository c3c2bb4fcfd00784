"""The restart policy of `memmesh run`: backoff doubling to a cap, reset after a long enough run,
no restart once stopping; driven by a fake clock and fake processes."""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from memmesh.runtime.metrics import ENGINE_RESTARTS, Instruments
from memmesh.runtime.supervisor import Backoff, Supervisor, describe_exit, read_supervisor_state


def test_backoff_doubles_from_the_initial_delay_up_to_the_cap() -> None:
    backoff = Backoff(initial_s=0.2, factor=2.0, cap_s=1.0, reset_after_s=30.0)
    assert [backoff.delay_after(ran_for_s=0.1) for _ in range(6)] == [0.2, 0.4, 0.8, 1.0, 1.0, 1.0]


def test_backoff_starts_over_after_a_run_that_lasted_long_enough() -> None:
    backoff = Backoff(initial_s=0.2, cap_s=10.0, reset_after_s=30.0)
    assert [backoff.delay_after(1.0) for _ in range(3)] == [0.2, 0.4, 0.8]
    assert backoff.delay_after(ran_for_s=30.0) == 0.2
    assert backoff.delay_after(ran_for_s=29.9) == 0.4


def test_an_exit_is_described_with_the_signal_that_caused_it() -> None:
    assert describe_exit(-signal.SIGKILL) == "code -9 (SIGKILL)"
    assert describe_exit(1) == "code 1"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeProcess:
    pid: int
    exit_code: int | None = None
    stdout: IO[str] | None = None

    def poll(self) -> int | None:
        return self.exit_code


class FakeEngines:
    """Spawns fake processes; each new one exits at once when `crash_on_start` is set."""

    def __init__(self) -> None:
        self.spawned: list[FakeProcess] = []
        self.crash_on_start = False

    def __call__(self, name: str) -> FakeProcess:
        process = FakeProcess(
            pid=100 + len(self.spawned), exit_code=1 if self.crash_on_start else None
        )
        self.spawned.append(process)
        return process


def _supervisor(tmp_path: Path) -> tuple[Supervisor, FakeEngines, FakeClock, FakeProcess]:
    engines, clock = FakeEngines(), FakeClock()
    supervisor = Supervisor(
        engines, tmp_path / "state.json", clock=clock, backoff=lambda: Backoff(cap_s=1.0)
    )
    first = FakeProcess(pid=10)
    supervisor.adopt("ledger", "127.0.0.1:5001", first)
    return supervisor, engines, clock, first


def test_a_dead_engine_is_restarted_after_its_backoff_and_its_state_recorded(
    tmp_path: Path,
) -> None:
    supervisor, engines, clock, first = _supervisor(tmp_path)
    first.exit_code = -signal.SIGKILL
    supervisor.check()
    assert engines.spawned == []
    assert supervisor.engines["ledger"].state == "backoff"
    clock.now += 0.19
    supervisor.check()
    assert engines.spawned == []
    clock.now += 0.01
    supervisor.check()
    assert len(engines.spawned) == 1

    state = read_supervisor_state(tmp_path / "state.json")
    assert state["ledger"] == {
        "addr": "127.0.0.1:5001",
        "pid": engines.spawned[0].pid,
        "state": "starting",
        "restarts": 1,
        "last_exit": -9,
    }


def test_an_engine_that_keeps_crashing_at_start_keeps_backing_off(tmp_path: Path) -> None:
    supervisor, engines, clock, first = _supervisor(tmp_path)
    engines.crash_on_start = True
    first.exit_code = 1
    restarted_at = []
    for step in range(400):  # 4 s, checked every 10 ms
        clock.now = 1000.0 + step / 100
        supervisor.check()
        if len(engines.spawned) > len(restarted_at):
            restarted_at.append(step / 100)
    # Each crash is seen one check after its start, then waits 0.2, 0.4, 0.8, then 1.0 (the cap).
    assert restarted_at == [0.2, 0.61, 1.42, 2.43, 3.44]
    assert supervisor.engines["ledger"].restarts == 5


def test_no_engine_is_restarted_once_stopping(tmp_path: Path) -> None:
    supervisor, engines, clock, first = _supervisor(tmp_path)
    first.exit_code = 0  # an engine that got the terminal's Ctrl-C before the supervisor did
    supervisor.check()
    clock.now += 5.0
    supervisor.run(should_stop=lambda: True, tick_s=0.0)
    assert engines.spawned == []


def test_status_ignores_a_state_file_whose_supervisor_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(
        json.dumps({"supervisor_pid": 2**22 + 12345, "engines": {"ledger": {"restarts": 3}}})
    )
    assert read_supervisor_state(path) == {}
    assert read_supervisor_state(tmp_path / "missing.json") == {}


def test_closing_removes_the_state_file(tmp_path: Path) -> None:
    supervisor, _, _, _ = _supervisor(tmp_path)
    assert (tmp_path / "state.json").exists()
    supervisor.close()
    assert not (tmp_path / "state.json").exists()
    assert read_supervisor_state(tmp_path / "state.json") == {}


def test_each_restart_counts_in_the_engine_restarts_metric(tmp_path: Path) -> None:
    reader = InMemoryMetricReader()
    meters = Instruments(MeterProvider(metric_readers=[reader]).get_meter("test"))
    engines, clock = FakeEngines(), FakeClock()
    supervisor = Supervisor(engines, clock=clock, meters=meters)
    supervisor.adopt("ledger", "127.0.0.1:5001", FakeProcess(pid=10, exit_code=1))
    supervisor.adopt("gateway", "127.0.0.1:5002", FakeProcess(pid=11))
    engines.crash_on_start = True
    for _ in range(3):
        supervisor.check()
        clock.now += 5.0
        supervisor.check()
    data = reader.get_metrics_data()
    assert data is not None
    (metric,) = [
        m
        for r in data.resource_metrics
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == ENGINE_RESTARTS
    ]
    counts = {p.attributes["engine"]: p.value for p in metric.data.data_points}  # type: ignore[index,union-attr]
    assert counts == {"ledger": 3}
