"""One user with 100,000 documents: Brief latency through the gateway and the ranker's memory.

90,000 atoms are written into the retrieval index and 10,000 turns archived through the
ThreadStore (as `turns` does at 10,000 atoms), then sequential Briefs go through the
gateway of the multi-process mesh, once a Brief comes back whole. The ranker is started again
after the writes (it built the new user's index as they came), so it reads the user's index
in the background on the first request, as after any restart; Briefs meanwhile leave
retrieval out within their budget. The ranker's resident memory is read before the user's
index is first loaded and after the Briefs, so what one such user costs the ranker shows.
"""

from __future__ import annotations

import asyncio
import signal
import tempfile
import time

from memmesh.bench.cpu import rss_bytes
from memmesh.bench.turns import (
    START_US,
    TENANT,
    _brief_latency,
    _seed,
    gateway_client,
    gateway_mesh,
)
from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import scope_pb2

ATOMS = 90_000
TURNS = 10_000
BRIEFS = 300
MIB = 1024 * 1024
LOADED_WITHIN_S = 120.0
RANKER = "retrieval_ranker"


async def _until_whole(client: GatewayClient, user: str) -> float:
    """Seconds until a Brief of the user comes back with nothing left out."""
    started = time.perf_counter()
    while time.perf_counter() - started < LOADED_WITHIN_S:
        response = await client.brief(
            user, "bench-session", START_US + 10_001 * 60_000_000, "coffee", timeout=30
        )
        if not response.degraded:
            break
        await asyncio.sleep(0.1)
    return round(time.perf_counter() - started, 1)


def run(storage_url: str = "sqlite") -> dict[str, object]:
    """Brief p50/p99 for a user with ATOMS + TURNS documents, and the ranker's RSS."""
    figures: dict[str, object] = {"documents": ATOMS + TURNS}
    with tempfile.TemporaryDirectory() as data_dir:
        mesh = gateway_mesh(data_dir, storage_url, None)
        mesh.start()
        try:
            user = f"bench-large-{time.time_ns()}"
            scope = scope_pb2.UserScope(tenant_id=TENANT, user_id=user)

            async def measure() -> None:
                await _seed(mesh.addrs, scope, atoms=ATOMS, turns=TURNS)
                # The ranker built the new user's index as it was written: started again, it
                # holds none, and reads it whole on the first Brief, as after any restart.
                mesh.kill(RANKER, signal.SIGTERM)
                mesh.start([RANKER])
                ranker_pid = mesh.running[RANKER].process.pid
                figures["ranker_rss_mb_before"] = round(rss_bytes(ranker_pid) / MIB, 1)
                async with gateway_client(mesh.addrs["gateway"]) as client:
                    figures["first_whole_brief_s"] = await _until_whole(client, user)
                    (
                        figures["brief"],
                        figures["brief_degraded"],
                        figures["brief_max_bytes"],
                    ) = await _brief_latency(client, user, BRIEFS)
                figures["ranker_rss_mb_after"] = round(rss_bytes(ranker_pid) / MIB, 1)

            asyncio.run(measure())
        finally:
            mesh.stop()
    return figures
