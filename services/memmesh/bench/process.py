"""Process latency for a typical user turn over gRPC (target p50 <= 10 ms).

Measured twice: against every engine in this one process (one interpreter lock for the
caller, the extractor and its peers) and against the engines as separate processes on
loopback, as `make run` and a deployment start them.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.bench.stats import percentile
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh
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
# The details change from turn to turn, so no text is seen twice and every turn pays for
# its own sentence encoding (a repeated text would be answered from the encoder's cache).
TYPICAL_TURNS = (
    "I prefer {drink} with my {food}.",
    "Hey, how are you doing this {daypart} in {city}?",
    "I'm going to visit my sister {name} in {city} next week.",
    "Can you help me write a poem about {food} and {music}?",
    "I love {music}, especially with {drink}.",
    "What's the weather like in {city} this {daypart}?",
    "My favorite food is {food} with {drink}.",
    "Actually I prefer {drink} in the {daypart}.",
    "Thanks, that {food} recipe from {name} was helpful!",
    "I live in {city} near my friend {name}.",
)
# List lengths chosen so that each template's pair of slots repeats only after 77 cycles.
FILLERS = {
    "drink": "tea cocoa kombucha lemonade matcha chai espresso cider kefir horchata milk".split(),
    "daypart": "morning afternoon evening weekend Monday Friday lunchtime".split(),
    "name": "Sarah Ana Priya Kwame Lena Tomas Yuki Omar Ines Farah Bea Dev".split(),
    "city": "Chicago Boston Lisbon Denver Osaka Accra Quito Porto Lyon Perth Oslo Pune Cork".split(),
    "food": "ramen paella dumplings tacos pho risotto falafel pierogi curry sushi".split(),
    "music": "jazz opera salsa bluegrass techno reggae flamenco grunge gospel".split(),
}


def typical_turn(number: int) -> str:
    """The number-th turn of the mix; each cycle through the templates takes new details."""
    cycle = number // len(TYPICAL_TURNS)
    template = TYPICAL_TURNS[number % len(TYPICAL_TURNS)]
    return template.format(**{slot: words[cycle % len(words)] for slot, words in FILLERS.items()})


TOKEN = "bench-token"


async def _timed_turns(
    stub: pb_grpc.AtomExtractorServiceStub, turns: int, users: int
) -> dict[str, float]:
    """p50/p99 of Process over `users` users' `turns` turns each, one call at a time."""
    samples: list[float] = []
    for user in range(users):
        scope = scope_pb2.UserScope(tenant_id="bench", user_id=f"user-{user}")
        for number in range(turns):
            text = typical_turn(user * turns + number)
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


async def _measure(turns: int, users: int, data_dir: Path) -> dict[str, float]:
    mesh = await start_in_process(ENGINES, data_dir)
    try:
        return await _timed_turns(
            pb_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor")), turns, users
        )
    finally:
        await mesh.stop()


def bench_process(turns: int = 100, users: int = 5) -> dict[str, float]:
    """Process latency p50/p99 in milliseconds over gRPC (the first user's first cycle is
    warm-up), every engine in this process."""
    with tempfile.TemporaryDirectory() as data_dir:
        return asyncio.run(_measure(turns, users, Path(data_dir)))


def bench_process_multi(turns: int = 100, users: int = 5) -> dict[str, float]:
    """The same turns against the engines as separate processes on loopback (SQLite)."""
    with tempfile.TemporaryDirectory() as data_dir:
        mesh = Mesh(
            ENGINES,
            env={
                "MEMMESH_DATA_DIR": data_dir,
                "MEMMESH_STORAGE_URL": "sqlite",
                "MEMMESH_INTERNAL_TOKEN": TOKEN,
                "MEMMESH_LOG_LEVEL": "WARNING",
            },
        )
        mesh.start()
        try:

            async def measure() -> dict[str, float]:
                async with engine_channel(mesh.addrs["atom_extractor"], TOKEN, 30.0) as channel:
                    return await _timed_turns(
                        pb_grpc.AtomExtractorServiceStub(channel), turns, users
                    )

            return asyncio.run(measure())
        finally:
            mesh.stop()


if __name__ == "__main__":
    print({"in_process": bench_process(), "separate_processes": bench_process_multi()})
