"""Process latency for a typical user turn over gRPC against in-process engines (target p50 <= 3 ms)."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.bench.stats import percentile
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.in_process import start_in_process

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
]
NOW = 1_767_225_600_000_000
# A voice session's mix: durable facts (new, restated, changed), small talk and questions.
TYPICAL_TURNS = (
    "I prefer tea over coffee.",
    "Hey, how are you doing today?",
    "I'm going to visit my sister Sarah in Chicago next week.",
    "Can you help me write a poem?",
    "I love jazz.",
    "What's the weather like tomorrow?",
    "My favorite color is blue.",
    "I prefer tea over coffee.",
    "Thanks, that was helpful!",
    "I live in Boston.",
)


async def _measure(turns: int, users: int, data_dir: Path) -> dict[str, float]:
    mesh = await start_in_process(ENGINES, data_dir)
    try:
        stub = pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
        samples: list[float] = []
        for user in range(users):
            scope = scope_pb2.UserScope(tenant_id="bench", user_id=f"user-{user}")
            for number in range(turns):
                text = TYPICAL_TURNS[number % len(TYPICAL_TURNS)]
                now = NOW + number * 1_000_000
                turn = memory_pb2.Turn(
                    turn_id=f"turn-{number}",
                    session_id="session-1",
                    role=memory_pb2.ROLE_USER,
                    text=text,
                    time=timestamp_of(now),
                )
                request = pb.ProcessRequest(scope=scope, turn=turn, now=timestamp_of(now))
                started = time.perf_counter()
                await stub.Process(request)
                samples.append((time.perf_counter() - started) * 1000)
        warm = samples[len(TYPICAL_TURNS) :]
        return {
            "process_turns": float(len(warm)),
            "process_p50_ms": round(percentile(warm, 0.50), 3),
            "process_p99_ms": round(percentile(warm, 0.99), 3),
        }
    finally:
        await mesh.stop()


def bench_process(turns: int = 100, users: int = 5) -> dict[str, float]:
    """Process latency p50/p99 in milliseconds over gRPC (the first user's first cycle is warm-up)."""
    with tempfile.TemporaryDirectory() as data_dir:
        return asyncio.run(_measure(turns, users, Path(data_dir)))


if __name__ == "__main__":
    print(bench_process())
