"""Latency figures for benchmarks."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def percentile(samples_ms: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of the samples."""
    ordered = sorted(samples_ms)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return ordered[index]


def summary(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50, p99 and mean in milliseconds, rounded to the microsecond."""
    return {
        "p50_ms": round(percentile(samples_ms, 0.50), 3),
        "p99_ms": round(percentile(samples_ms, 0.99), 3),
        "mean_ms": round(statistics.fmean(samples_ms), 3),
        "n": len(samples_ms),
    }
