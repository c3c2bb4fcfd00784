"""What this host's speed is before any engine work, so Brief figures of different machines
can be read side by side: one empty gRPC call (the floor under each of a Brief's seven
hops), the shared sentence encoder on one query (on every Brief's path), and a fixed loop of
plain Python (the engines' own code)."""

from __future__ import annotations

import time

from memmesh.bench.embedding import time_calls
from memmesh.bench.rpc_floor import floor
from memmesh.bench.stats import summary
from memmesh.embedding.encoder import Encoder

QUERY = "what do I like about coffee and chess"
LOOP_STEPS = 1_000_000


def _python_loop_ms() -> float:
    """Best of three runs of a fixed loop (the least disturbed by other processes)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for step in range(LOOP_STEPS):
            total += step
        best = min(best, time.perf_counter() - started)
    return round(best * 1e3, 1)


def _query_encode_ms(calls: int = 200) -> dict[str, float]:
    # No cache: every call runs the model, as for a query not heard before.
    wall_ms, _ = time_calls(Encoder.load(cache_size=0, quantized=True), [QUERY], calls)
    return summary(wall_ms)


def run() -> dict[str, object]:
    call = floor("aio", 2000, (1,))[1]
    return {
        "grpc_empty_call_cpu_us": round(call["caller_cpu_us"] + call["server_cpu_us"]),
        "grpc_empty_call_wall_us": round(call["wall_us"]),
        "python_loop_1m_ms": _python_loop_ms(),
        "query_encode": _query_encode_ms(),
    }
