"""`make eval-quality`: the seed 001 §2.12 metrics of every labelled fixture, replayed through
a real mesh, per fixture and overall, then the cost of the per-turn measurement events.

The metrics and the measurement totals are a function of the fixtures alone and print the
same on every run; the overhead line is a timing and varies with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.quality.fixtures import Fixture, load_fixtures
from memmesh.quality.measurement import (
    COUNTER_FIELDS,
    MeasurementLog,
    encode_event,
    measurement_event,
    read_events,
)
from memmesh.quality.metrics import QualityMetrics, score
from memmesh.quality.replay import MEASUREMENT_LOG, Replay, quality_mesh, replay
from memmesh.runtime.supervisor import Mesh

DEFAULT_FIXTURES = Path("fixtures/quality")
# Seed 001 §2.17 Q17: measurement overhead < 3 % per turn.
OVERHEAD_LIMIT = 0.03
# Repetitions of the measured hook per Brief, so one call's microseconds are not noise.
OVERHEAD_REPEATS = 200


@dataclass
class FixtureResult:
    """One fixture's replay, its metrics and the measurement events its Briefs logged."""

    fixture: Fixture
    replay: Replay
    metrics: QualityMetrics
    events: list[dict[str, Any]]


def measured_totals(events: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Sums of the §2.12 logging counters over events, with the event count and largest size."""
    totals = {name: sum(int(e[name]) for e in events) for name in COUNTER_FIELDS}
    totals["events"] = len(events)
    totals["max_event_bytes"] = max((len(encode_event(e)) for e in events), default=0)
    return totals


async def evaluate_fixture(
    mesh: Mesh, log_path: Path, fixture: Fixture, user_id: str
) -> FixtureResult:
    """Replay one fixture as `user_id` and score it; its events are the log's new lines."""
    before = len(read_events(log_path))
    played = await replay(mesh, fixture, user_id)
    events = read_events(log_path)[before:]
    return FixtureResult(fixture, played, score(fixture, played.observations()), events)


def report(results: Sequence[FixtureResult]) -> dict[str, Any]:
    """Per fixture and overall: the metrics and the measurement totals (stable output)."""
    fixtures = {
        r.fixture.name: {"metrics": r.metrics.as_dict(), "measured": measured_totals(r.events)}
        for r in results
    }
    overall = sum((r.metrics for r in results), QualityMetrics())
    events = [e for r in results for e in r.events]
    return {
        "fixtures": dict(sorted(fixtures.items())),
        "overall": {"metrics": overall.as_dict(), "measured": measured_totals(events)},
    }


def measurement_overhead(results: Sequence[FixtureResult], scratch: Path) -> dict[str, float]:
    """The gateway's per-turn measurement cost (build, encode and append the event, as its
    hook does) against the median Brief latency the client saw."""
    responses: list[gateway_pb.BriefResponse] = [
        response for r in results for response in r.replay.responses.values()
    ]
    latencies = [s for r in results for s in r.replay.latencies_s]
    log = MeasurementLog(scratch / "overhead.jsonl")
    try:
        started = time.perf_counter()
        for _ in range(OVERHEAD_REPEATS):
            for response in responses:
                log.record(response)
        per_turn_s = (time.perf_counter() - started) / (OVERHEAD_REPEATS * len(responses))
    finally:
        log.close()
    brief_s = statistics.median(latencies)
    return {
        "measurement_us_per_turn": round(per_turn_s * 1e6, 1),
        "median_brief_ms": round(brief_s * 1e3, 2),
        "overhead_percent": round(100 * per_turn_s / brief_s, 3),
        "largest_event_bytes": max(len(encode_event(measurement_event(r))) for r in responses),
    }


async def evaluate(mesh: Mesh, data_dir: Path, fixtures: Sequence[Fixture]) -> list[FixtureResult]:
    """Every fixture, one user each, in name order."""
    log_path = data_dir / MEASUREMENT_LOG
    return [
        await evaluate_fixture(mesh, log_path, fixture, f"quality-{fixture.name}")
        for fixture in fixtures
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    args = parser.parse_args(argv)
    fixtures = load_fixtures(args.fixtures)
    if not fixtures:
        print(f"no fixtures in {args.fixtures}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="memmesh-quality-") as scratch:
        data_dir = Path(scratch) / "mesh"
        with quality_mesh(data_dir) as mesh:
            results = asyncio.run(evaluate(mesh, data_dir, fixtures))
        print(json.dumps(report(results), indent=2))
        overhead = measurement_overhead(results, Path(scratch))
    print("measurement overhead (timing, varies by machine): " + json.dumps(overhead))
    if overhead["overhead_percent"] >= 100 * OVERHEAD_LIMIT:
        print(f"measurement overhead is over {OVERHEAD_LIMIT:.0%} of a turn", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
