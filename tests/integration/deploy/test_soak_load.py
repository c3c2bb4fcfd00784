"""`make soak` kept working: a few seconds at a low rate against the real mesh on SQLite."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from memmesh.runtime.supervisor import built_engines

SECONDS, WINDOW_S, RATE = 4, 2, 5
TIMEOUT_S = 180


def _soak(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the soak in a process group of its own: when it does not finish in time, the
    group (the soak and the engines it started) is killed and what it printed is kept for
    the failure, instead of engines left running and nothing to read."""
    with subprocess.Popen(
        [sys.executable, "-m", "memmesh.bench.soak", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(f"the soak did not finish in {TIMEOUT_S} s\n{stdout}\n{stderr}")
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_soak_sends_the_paced_load_and_prints_each_window_and_the_summary() -> None:
    result = _soak(
        f"--seconds={SECONDS}",
        f"--window-s={WINDOW_S}",
        f"--brief-rate={RATE}",
        f"--ingest-rate={RATE}",
        "--callers=2",
        "--users=3",
        "--warmup-s=1",
        "--history=2",
    )
    # 0 is PASS, 1 FAIL: a few seconds on a shared machine prove nothing about drift.
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()

    # Each user's history is said first, every Ingest of it answered, before the warm-up.
    history = [n for n, line in enumerate(lines) if line.startswith("history: ")]
    assert len(history) == 1, result.stdout
    assert "2 turns for each of 3 users (6 Ingests) in " in lines[history[0]], result.stdout
    assert " s, the mesh quiet " in lines[history[0]], result.stdout
    assert "errors {}; the run's sessions opened, errors {}" in lines[history[0]], result.stdout

    # The warm-up is reported apart and never counted in a window.
    assert sum(line.startswith("warm-up ") for line in lines) == 1, result.stdout
    windows = [line for line in lines if line.startswith("window ")]
    assert len(windows) == SECONDS // WINDOW_S, result.stdout
    for line in windows:
        fields = ("brief due=", "p50=", "p99=", "empty=", "degraded=", "ingest due=", "rss_mb")
        for field in fields:
            assert field in line, line
        memory, cpu = line.split("| rss_mb ")[1].split(" | cpu_pct ")
        # The host's reference runs outside the windows, never inside one of them.
        assert "host_ref_ms" not in line, line
        for engine in built_engines():
            assert re.search(rf"\b{engine}=\d+", memory), (engine, line)
            assert re.search(rf"\b{engine}=\d+", cpu), (engine, line)
        # The host probe ran in every second of the window: its median and slowest second.
        probe = re.search(r"\| host_probe_ms p50=([0-9.]+) max=([0-9.]+)$", line)
        assert probe is not None, line
        assert 0 < float(probe[1]) <= float(probe[2]), line

    # The host's own speed, before the measured run and after its load: positive CPU times,
    # taken after the warm-up and before the first window, after the last window.
    host = [n for n, line in enumerate(lines) if line.startswith("host_ref_ms ")]
    assert len(host) == 2, result.stdout
    assert lines[host[0]].startswith("host_ref_ms before the run: ")
    assert lines[host[1]].startswith("host_ref_ms after the run: ")
    first_window = lines.index(windows[0])
    warm_up = lines.index(next(line for line in lines if line.startswith("warm-up ")))
    assert history[0] < warm_up < host[0], result.stdout
    assert host[0] < first_window and lines.index(windows[-1]) < host[1], result.stdout
    assert all(float(lines[n].rsplit(": ", 1)[1]) > 0 for n in host), result.stdout

    summary = json.loads(next(line for line in lines if line.startswith("summary: "))[9:])
    expected = SECONDS * RATE
    for kind in ("brief", "ingest"):
        figures = summary[kind]
        assert figures["expected"] == expected
        # Open-loop pacing sends what the schedule says, whatever the answers do.
        assert abs(figures["sent"] - expected) <= 1, figures
        # Every request sent is accounted for: answered or failed with a status code.
        assert figures["ok"] + sum(figures["errors"].values()) == figures["sent"], figures
        assert {"p99_first_ms", "p99_last_ms", "p99_drift_pct"} <= figures.keys()
    assert summary["host_probe_max_first_ms"] > 0 and summary["host_probe_max_last_ms"] > 0
    assert {"empty", "degraded"} <= summary["brief"].keys()
    assert set(summary["rss_growth_pct"]) == set(built_engines())
    # The gateway answers every request: its CPU in the last window is above nothing.
    assert set(summary["cpu_last_pct"]) == set(built_engines())
    assert summary["cpu_last_pct"]["gateway"] > 0, summary
    assert all(size > 0 for size in summary["rss_first_mb"].values()), summary
    assert summary["host_ref_first_ms"] > 0 and summary["host_ref_last_ms"] > 0, summary
    assert summary["host_ref_drift_pct"] is not None
    assert isinstance(summary["mesh_cpu_drift_vs_host_pct"], float)
    verdict = next(line for line in lines if line.startswith("verdict: "))
    assert verdict.startswith("verdict: PASS" if summary["pass"] else "verdict: FAIL")
    assert result.returncode == (0 if summary["pass"] else 1)
