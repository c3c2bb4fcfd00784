"""Brief latency of this tree beside another source tree's, measured in pairs.

    git worktree add ../base <commit>
    .venv/bin/python -m memmesh.bench.paired ../base [--briefs N]

Both meshes run at once on SQLite, each with its own tree's code and the same seeded user
(10,000 archived turns, 10,000 atoms); the caller then sends the same query to one and the
other in turn, alternating which goes first. A busy or slowed host weighs on both sides
alike, so the ratio of their p50 and p99 holds where two runs an hour apart would differ by
more than the change being measured. Only one side is ever busy at a time. CPU per Brief is
summed over each mesh's engine processes. The other tree must serve the same Brief
contract and run on this tree's virtualenv.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import IO

from memmesh.bench import turns
from memmesh.bench.cpu import cpu_seconds
from memmesh.bench.paired_mesh import USER
from memmesh.bench.stats import summary
from memmesh.client.gateway import GatewayClient

THIS_TREE = Path(__file__).resolve().parents[3]
NOW_US = turns.START_US + 10_001 * 60_000_000
WARM_UP = 60


class Side:
    """One tree's mesh, held by a paired_mesh.py process."""

    def __init__(self, name: str, tree: Path, data_dir: str) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": f"{tree / 'libs'}{os.pathsep}{tree / 'services'}"}
        self._process = subprocess.Popen(
            # -P: the script's folder (this tree's bench modules) is not put on the path.
            [sys.executable, "-P", str(Path(__file__).with_name("paired_mesh.py")), data_dir],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.gateway = ""
        self.pids: list[int] = []
        self.latencies_ms: list[float] = []

    def wait_ready(self) -> None:
        stdout: IO[str] | None = self._process.stdout
        line = stdout.readline() if stdout is not None else ""
        if not line:
            raise RuntimeError(f"the {self.name} mesh exited before it was ready")
        ready = json.loads(line)
        self.gateway, self.pids = ready["gateway"], list(ready["pids"].values())

    def stop(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=60)


async def _brief(client: GatewayClient, query: str) -> float:
    started = time.perf_counter()
    await client.brief(USER, "paired-session", NOW_US, query)
    return (time.perf_counter() - started) * 1000


async def _measure(sides: list[Side], briefs: int) -> dict[str, object]:
    rng = random.Random(11)
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                GatewayClient(s.gateway, turns.KEY, tenant_id=turns.TENANT)
            )
            for s in sides
        ]
        # Warm-up: channels, and each ranker's in-memory index of the user (timeout of a load).
        for _ in range(WARM_UP):
            query = turns._query(rng)
            for client in clients:
                await client.brief(USER, "paired-session", NOW_US, query, timeout=30)
        cpu_before = [cpu_seconds(s.pids) for s in sides]
        for n in range(briefs):
            query = turns._query(rng)
            order = (0, 1) if n % 2 == 0 else (1, 0)
            for i in order:
                sides[i].latencies_ms.append(await _brief(clients[i], query))
        cpu_ms = [
            round((cpu_seconds(s.pids) - before) * 1000 / briefs, 2)
            for s, before in zip(sides, cpu_before, strict=True)
        ]
    figures: dict[str, object] = {
        side.name: {**summary(side.latencies_ms), "cpu_ms_per_brief": cpu}
        for side, cpu in zip(sides, cpu_ms, strict=True)
    }
    this, other = (summary(s.latencies_ms) for s in sides)
    figures["ratio_p50"] = round(this["p50_ms"] / other["p50_ms"], 3)
    figures["ratio_p99"] = round(this["p99_ms"] / other["p99_ms"], 3)
    return figures


def run(other_tree: Path, briefs: int) -> dict[str, object]:
    """Brief latency and CPU of this tree and the other, and this tree's ratio to it."""
    with ExitStack() as stack:
        sides = []
        for name, tree in (("this", THIS_TREE), ("other", other_tree.resolve())):
            data_dir = stack.enter_context(tempfile.TemporaryDirectory())
            side = Side(name, tree, data_dir)
            stack.callback(side.stop)
            sides.append(side)
        for side in sides:
            side.wait_ready()
        return asyncio.run(_measure(sides, briefs))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m memmesh.bench.paired")
    parser.add_argument("other_tree", type=Path, help="a checkout of the commit to compare with")
    parser.add_argument("--briefs", type=int, default=1000, help="Briefs per side")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.other_tree, args.briefs), sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
