"""`make soak`: a bounded load test of the whole mesh on embedded storage (SQLite).

Brief and Ingest are sent open-loop, each at its own fixed rate (`--brief-rate`,
`--ingest-rate` per second) for `--minutes`: request n of a kind is due at n / rate
seconds, whether or not the ones before it have answered, and its latency is measured
from that due time, so a mesh that falls behind shows it in the figures instead of
slowing the load down. Requests go out through `--callers` gateway clients (one channel
each) in turn, for `--users` users in turn. At most `--max-in-flight` requests are
outstanding; a request due while that many are waits, and the wait is in its latency.

Every user starts with a history: `--history` turns each (150 by default), ingested before
the warm-up as fast as the mesh takes them (a few callers' worth in flight, not paced, not
measured), with times before the run's; then each user's run session is started (its first
Brief and first turn), so that the session starts do not fall together into the warm-up's
first seconds. A voice user's memory is seldom empty, and a young one is still filling: a
request's work grows with its user's history until the bounded parts fill (behaviour
observations, bundle caps, candidate lists). At 50 + 50 requests a second over 100 users the
mesh took 0.90 cores with 30 turns each, 1.13 with 150 and 1.18 with 300; with 30 turns and
500 users, a ten-minute run carries every user from 30 to 90 turns, through that filling,
and measures it as a drift. 250 users (`--users`) with 150 turns each start past it (each
ends near 270) and keep the history to about 37,500 Ingests. `--history 0` starts from empty
users.

A warm-up of `--warmup-s` (90 s by default) at the same rates comes first and is not
measured: connections, caches and the engines' first writes settle, so the first window
compares with the last as a steady state. After the history's 37,500 Ingests that takes
more than 30 s: in one run p99 fell from 35.5 / 51.2 ms (Brief / Ingest) in a 30 s warm-up
to 32.0 / 46.1 in the first window and 26.3 / 34.5 in the third, at the same CPU.

Every window (a minute by default, `--window-s`) prints one line: per kind the requests
due in it, p50 and p99 latency, errors by status code, and for Brief how many came back
empty (failed closed) or degraded (a Tier-2 part left out); then the resident memory of
every engine process and its CPU in the window (% of one core), so a drift names its
engine; then the host probe's median and slowest second (the CPU time of a millisecond's
fixed work, run once a second in the generator), so a burst of slow requests that came
with a slower host shows as one. `host_ref_ms`, the CPU time of a fixed piece of work, is taken once before the
measured run and once after its load has stopped, so a drift that comes from the host itself
(a shared machine running code slower) shows as one without the reference's own work landing
in some windows and not in others. The summary compares the first window with the last: p99
drift in %, RSS growth in % per engine (and, not judged, the host reference's drift and the
mesh's CPU drift with the host's taken out), and passes when both p99s stay within ±20 % and
no engine grew by 10 % or more. Exit status 0 on PASS, 1 on FAIL.

The load generator is part of the measurement, so it keeps its own pauses out of the
windows alike: the heap it built before the run is frozen (the collector does not walk it
again) and each window's finished requests are let go once counted, so its collections do
not grow longer, and the last window slower, as the run goes on.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import grpc

from memmesh.bench.cpu import cpu_seconds, rss_bytes
from memmesh.bench.stats import percentile
from memmesh.bench.turns import (
    START_US,
    _ingest_text,
    _query,
    gateway_client,
    gateway_mesh,
)
from memmesh.client.gateway import GatewayClient
from memmesh.gateway.v1 import gateway_service_pb2 as pb

P99_DRIFT_LIMIT_PCT = 20.0
RSS_GROWTH_LIMIT_PCT = 10.0
# The engines' CPU, in cores, under which the mesh counts as idle after the history.
QUIET_CORES = 0.1
BRIEF_TIMEOUT_S = 5.0
INGEST_TIMEOUT_S = 10.0
KINDS = ("brief", "ingest")
Reply = TypeVar("Reply")


@dataclass
class Tally:
    """What the requests of one kind due in one window did."""

    due: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    empty: int = 0
    degraded: int = 0

    def latency_ms(self, fraction: float) -> float | None:
        """A percentile of the answered requests' latencies (None when none answered)."""
        done = self.latencies_ms
        return round(percentile(done, fraction), 1) if done else None


@dataclass
class Window:
    """One reporting window: a tally per kind and the tasks of the requests due in it."""

    tallies: dict[str, Tally] = field(default_factory=lambda: {kind: Tally() for kind in KINDS})
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # HOST_PROBE's CPU milliseconds, once a second of the window.
    probes_ms: list[float] = field(default_factory=list)

    def probe_ms(self, fraction: float) -> float | None:
        return round(percentile(self.probes_ms, fraction), 3) if self.probes_ms else None


# A fixed piece of pure-Python work whose CPU time (not wall time: waiting for a core does
# not count) shows how fast this host runs code right now. Timed in a process of its own
# once a window, the best of a few runs: a drift of the mesh's latency that the reference
# shares is the host's, not the mesh's.
HOST_REFERENCE = """
import time
best = float("inf")
for _ in range(5):
    started = time.process_time()
    total, table = 0, {}
    for n in range(200_000):
        total += n * n % 7
        if n % 4 == 0:
            table[str(n)] = total
    best = min(best, time.process_time() - started)
print(round(best * 1000, 2))
"""


# The same kind of work, small enough (about a millisecond) to run in the generator once a
# second without a process of its own: the bursts of slow requests a window can hold come
# with every engine using more CPU for the same requests; a probe slow in the same seconds
# says the host, not the mesh, ran code slower then.
PROBE_INTERVAL_S = 1.0
PROBE_ITERATIONS = 4_000


def host_probe_ms() -> float:
    """The CPU milliseconds this thread takes for a fixed small piece of work."""
    started = time.thread_time()
    total, table = 0, {}
    for n in range(PROBE_ITERATIONS):
        total += n * n % 7
        if n % 4 == 0:
            table[str(n)] = total
    return (time.thread_time() - started) * 1000


async def host_reference_ms() -> float | None:
    """The CPU milliseconds of HOST_REFERENCE now (None if it could not run)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOST_REFERENCE, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    try:
        return float(out)
    except ValueError:
        return None


def drift_pct(first: float | None, last: float | None) -> float | None:
    """How far `last` is from `first`, in % of `first` (None without both)."""
    if first is None or last is None or first <= 0:
        return None
    return round((last - first) * 100 / first, 1)


@dataclass
class Soak:
    """The load of one run against a started mesh's gateway."""

    clients: Sequence[GatewayClient]
    users: int
    window_s: float
    max_in_flight: int
    windows: list[Window] = field(default_factory=list)
    seed: int = 7
    # Names the run's turns and sessions, and where its clock starts: a warm-up and the
    # measured run never share a turn id and their times follow each other.
    label: str = "soak"
    start_us: int = START_US

    def __post_init__(self) -> None:
        self._in_flight = asyncio.Semaphore(self.max_in_flight)
        self._rng = random.Random(self.seed)

    def window_at(self, offset_s: float) -> Window:
        """The window of a request due `offset_s` after the start."""
        index = int(offset_s // self.window_s)
        while len(self.windows) <= index:
            self.windows.append(Window())
        return self.windows[index]

    def user(self, n: int) -> str:
        """The user of the n-th request of a kind (users taken in turn)."""
        return user_of(n, self.users)

    async def _timed(
        self, tally: Tally, due: float, call: Callable[[], Awaitable[Reply]]
    ) -> Reply | None:
        async with self._in_flight:
            try:
                reply = await call()
            except grpc.aio.AioRpcError as error:
                tally.errors[error.code().name] += 1
                return None
        tally.latencies_ms.append((asyncio.get_running_loop().time() - due) * 1000)
        return reply

    async def brief(self, n: int, due: float, offset_s: float) -> None:
        tally = self.window_at(offset_s).tallies["brief"]
        client = self.clients[n % len(self.clients)]
        user, query = self.user(n), _query(self._rng)
        now_us = self.start_us + int(offset_s * 1e6)

        async def call() -> pb.BriefResponse:
            return await client.brief(user, f"soak-{user}", now_us, query, timeout=BRIEF_TIMEOUT_S)

        reply = await self._timed(tally, due, call)
        if reply is not None and reply.degraded:
            # Failed closed: degraded with no part named (Tier 2 keeps a bundle).
            tally.degraded += int(bool(reply.degraded_parts))
            tally.empty += int(not reply.degraded_parts)

    async def ingest(self, n: int, due: float, offset_s: float) -> None:
        tally = self.window_at(offset_s).tallies["ingest"]
        client = self.clients[n % len(self.clients)]
        user, text = self.user(n), _ingest_text(self._rng)
        time_us = self.start_us + int(offset_s * 1e6)

        async def call() -> pb.IngestResponse:
            return await client.ingest(
                user,
                f"soak-{user}",
                f"{self.label}-turn-{n}",
                "user",
                text,
                time_us,
                timeout=INGEST_TIMEOUT_S,
            )

        await self._timed(tally, due, call)

    async def pace(
        self,
        kind: str,
        rate: float,
        duration_s: float,
        start: float,
        send: Callable[[int, float, float], Coroutine[object, object, None]],
    ) -> None:
        """Request n due at start + n / rate, sent then whatever the ones before it do."""
        if rate <= 0:
            return
        loop = asyncio.get_running_loop()
        n = 0
        while (offset := n / rate) < duration_s:
            due = start + offset
            if (delay := due - loop.time()) > 0:
                await asyncio.sleep(delay)
            window = self.window_at(offset)
            window.tallies[kind].due += 1
            window.tasks.append(asyncio.create_task(send(n, due, offset)))
            n += 1


async def _probe_host(run: Soak, duration_s: float, start: float) -> None:
    """HOST_PROBE once a second of the run, each into the window of its second."""
    loop = asyncio.get_running_loop()
    n = 0
    while (offset := n * PROBE_INTERVAL_S) < duration_s:
        if (delay := start + offset - loop.time()) > 0:
            await asyncio.sleep(delay)
        run.window_at(offset).probes_ms.append(host_probe_ms())
        n += 1


def _line(
    number: int,
    window: Window,
    rss: dict[str, int],
    window_s: float,
    cpu_pct: dict[str, float] | None = None,
) -> str:
    brief, ingest = window.tallies["brief"], window.tallies["ingest"]
    memory = " ".join(f"{name}={size / 2**20:.0f}" for name, size in rss.items())
    # CPU of each engine in the window, in % of one core: which engine a drift comes from.
    cpu = " ".join(f"{name}={pct:.0f}" for name, pct in (cpu_pct or {}).items())

    def part(tally: Tally) -> str:
        errors = sum(tally.errors.values())
        return (
            f"due={tally.due} ok={len(tally.latencies_ms)} "
            f"p50={_ms(tally.latency_ms(0.50))} p99={_ms(tally.latency_ms(0.99))} "
            f"errors={errors}"
        )

    probe = (
        f" | host_probe_ms p50={window.probe_ms(0.5)} max={window.probe_ms(1.0)}"
        if window.probes_ms
        else ""
    )
    return (
        f"window {number} ({window_s:g} s): "
        f"brief {part(brief)} empty={brief.empty} degraded={brief.degraded} | "
        f"ingest {part(ingest)} | rss_mb {memory}" + (f" | cpu_pct {cpu}" if cpu else "") + probe
    )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value}ms"


def summarise(
    windows: Sequence[Window],
    rss: Sequence[dict[str, int]],
    rates: dict[str, float],
    seconds: float,
) -> dict[str, object]:
    """Totals per kind, p99 drift and RSS growth first window to last, and the verdict."""
    summary: dict[str, object] = {}
    passed = True
    for kind in KINDS:
        tallies = [window.tallies[kind] for window in windows]
        first, last = tallies[0].latency_ms(0.99), tallies[-1].latency_ms(0.99)
        drift = drift_pct(first, last)
        errors: Counter[str] = Counter()
        for tally in tallies:
            errors.update(tally.errors)
        figures: dict[str, object] = {
            "expected": round(rates[kind] * seconds),
            "sent": sum(t.due for t in tallies),
            "ok": sum(len(t.latencies_ms) for t in tallies),
            "errors": dict(sorted(errors.items())),
            "p99_first_ms": first,
            "p99_last_ms": last,
            "p99_drift_pct": drift,
        }
        if kind == "brief":
            figures["empty"] = sum(t.empty for t in tallies)
            figures["degraded"] = sum(t.degraded for t in tallies)
        summary[kind] = figures
        if rates[kind] > 0 and (drift is None or abs(drift) > P99_DRIFT_LIMIT_PCT):
            passed = False
    growth = {name: drift_pct(rss[0][name], rss[-1][name]) for name in rss[0]}
    summary["rss_first_mb"] = {name: round(size / 2**20, 1) for name, size in rss[0].items()}
    summary["rss_last_mb"] = {name: round(size / 2**20, 1) for name, size in rss[-1].items()}
    summary["rss_growth_pct"] = growth
    if any(pct is None or pct >= RSS_GROWTH_LIMIT_PCT for pct in growth.values()):
        passed = False
    summary["pass"] = passed
    return summary


def user_of(n: int, users: int) -> str:
    """The user of the n-th request when `users` are taken in turn."""
    return f"soak-user-{n % users:04d}"


async def seed_history(
    clients: Sequence[GatewayClient], users: int, turns: int, seed: int = 11
) -> tuple[int, dict[str, int]]:
    """`turns` user turns for each user, users taken in turn, before START_US (a
    millisecond apart); sent closed-loop, four per caller in flight. How many were sent and
    the errors by status code."""
    total = users * turns
    rng = random.Random(seed)
    texts = [_ingest_text(rng) for _ in range(total)]
    errors: Counter[str] = Counter()
    in_flight = asyncio.Semaphore(4 * len(clients))

    async def said(n: int) -> None:
        user = user_of(n, users)
        async with in_flight:
            try:
                await clients[n % len(clients)].ingest(
                    user,
                    f"soak-{user}-history",
                    f"history-turn-{n}",
                    "user",
                    texts[n],
                    START_US - (total - n) * 1000,
                    timeout=INGEST_TIMEOUT_S,
                )
            except grpc.aio.AioRpcError as error:
                errors[error.code().name] += 1

    await asyncio.gather(*(said(n) for n in range(total)))
    return total, dict(errors)


async def open_sessions(
    clients: Sequence[GatewayClient], users: int, seed: int = 13
) -> dict[str, int]:
    """Each user's run session (`soak-<user>`) started: its first Brief, then its first turn,
    closed-loop, four per caller in flight; the errors by status code. A session's start is
    the most work a turn does (the Brief: the previous session's resume, the entities,
    pending work; the turn: the previous session closed and digested): started here, those of
    all users do not fall together into the first seconds of the warm-up, as no real traffic
    has them do."""
    rng = random.Random(seed)
    texts = [_ingest_text(rng) for _ in range(users)]
    errors: Counter[str] = Counter()
    in_flight = asyncio.Semaphore(4 * len(clients))

    async def opened(n: int) -> None:
        user, client = user_of(n, users), clients[n % len(clients)]
        async with in_flight:
            try:
                await client.brief(user, f"soak-{user}", START_US, "hello", timeout=30)
                await client.ingest(
                    user,
                    f"soak-{user}",
                    f"opening-turn-{n}",
                    "user",
                    texts[n],
                    START_US,
                    timeout=INGEST_TIMEOUT_S,
                )
            except grpc.aio.AioRpcError as error:
                errors[error.code().name] += 1

    await asyncio.gather(*(opened(n) for n in range(users)))
    return dict(errors)


async def settled_s(pids: Sequence[int], limit_s: float = 180.0) -> float:
    """Seconds until the engines, together, use under QUIET_CORES of CPU over a second
    (work the history queued, such as effects still being delivered, done), at most
    `limit_s`."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    while loop.time() - began < limit_s:
        used = cpu_seconds(pids)
        await asyncio.sleep(1.0)
        if cpu_seconds(pids) - used < QUIET_CORES:
            break
    return loop.time() - began


async def soak(
    gateway: str,
    pids: dict[str, int],
    seconds: float,
    rates: dict[str, float],
    callers: int,
    users: int,
    window_s: float,
    max_in_flight: int,
    warmup_s: float = 0.0,
    history: int = 0,
) -> dict[str, object]:
    """Run the load, printing a line per window; the summary."""
    clients = [gateway_client(gateway) for _ in range(callers)]
    try:
        run = Soak(clients, users, window_s, max_in_flight, start_us=START_US + int(warmup_s * 1e6))
        # One Brief per caller first: channels connected before the clock starts.
        for n, client in enumerate(clients):
            await client.brief(run.user(n), "soak-warmup", START_US, "hello", timeout=30)
        if history > 0:
            began = time.monotonic()
            sent, failed = await seed_history(clients, users, history)
            said_s = time.monotonic() - began
            refused = await open_sessions(clients, users)
            # What the history left to do is not the warm-up's, nor the first window's.
            quiet_s = await settled_s(list(pids.values()))
            print(
                f"history: {history} turns for each of {users} users ({sent} Ingests) in "
                f"{said_s:.0f} s, the mesh quiet {quiet_s:.0f} s later, errors {failed}; "
                f"the run's sessions opened, errors {refused}",
                flush=True,
            )
        if warmup_s > 0:
            warm = Soak(clients, users, warmup_s, max_in_flight, label="warmup")
            await _paced(warm, rates, warmup_s, asyncio.get_running_loop().time() + 0.05)
            await asyncio.gather(*warm.windows[0].tasks)
            print(_line(0, warm.windows[0], {}, warmup_s).replace("window 0", "warm-up"))
            warm.windows.clear()
        host_first = await host_reference_ms()
        print(f"host_ref_ms before the run: {host_first}", flush=True)
        # What the generator holds so far lives through the run: its collections skip it.
        gc.collect()
        gc.freeze()
        loop = asyncio.get_running_loop()
        start = loop.time() + 0.05
        senders = asyncio.create_task(_paced(run, rates, seconds, start))
        probes = asyncio.create_task(_probe_host(run, seconds, start))
        # The last window may be shorter than the others.
        count = math.ceil(seconds / window_s - 1e-9)
        rss: list[dict[str, int]] = []
        cpu: list[dict[str, float]] = []
        used = {name: cpu_seconds([pid]) for name, pid in pids.items()}
        for number in range(count):
            end = start + min((number + 1) * window_s, seconds)
            await asyncio.sleep(max(0.0, end - loop.time()))
            rss.append({name: rss_bytes(pid) for name, pid in pids.items()})
            now_used = {name: cpu_seconds([pid]) for name, pid in pids.items()}
            span_s = min((number + 1) * window_s, seconds) - number * window_s
            cpu.append({name: (now_used[name] - used[name]) * 100 / span_s for name in pids})
            used = now_used
            window = run.window_at(number * window_s)
            # The window's line waits for its last requests (each has its own deadline).
            await asyncio.gather(*window.tasks)
            window.tasks.clear()
            print(_line(number + 1, window, rss[-1], window_s, cpu[-1]), flush=True)
        await senders
        await probes
        for late in run.windows[count:]:
            await asyncio.gather(*late.tasks)
        host_last = await host_reference_ms()
        print(f"host_ref_ms after the run: {host_last}", flush=True)
        summary = summarise(run.windows[:count], rss, rates, seconds)
        summary["cpu_first_pct"] = {name: round(pct, 1) for name, pct in cpu[0].items()}
        summary["cpu_last_pct"] = {name: round(pct, 1) for name, pct in cpu[-1].items()}
        # Not part of the verdict: how much slower (or faster) the host itself ran code
        # after the run than before it.
        summary["host_ref_first_ms"], summary["host_ref_last_ms"] = host_first, host_last
        summary["host_ref_drift_pct"] = drift_pct(host_first, host_last)
        # Not part of the verdict either: the host probe's slowest second in the first and
        # the last window, beside those windows' p99s.
        windows = run.windows[:count]
        summary["host_probe_max_first_ms"] = windows[0].probe_ms(1.0)
        summary["host_probe_max_last_ms"] = windows[-1].probe_ms(1.0)
        # The mesh's CPU for the same load, last window against the first, with the host's
        # own change of speed taken out: the drift of the mesh's work per request.
        mesh_first, mesh_last = sum(cpu[0].values()), sum(cpu[-1].values())
        if host_first and host_last and mesh_first > 0:
            summary["mesh_cpu_drift_vs_host_pct"] = round(
                (mesh_last / mesh_first) / (host_last / host_first) * 100 - 100, 1
            )
        return summary
    finally:
        gc.unfreeze()
        for client in clients:
            await client.close()


async def _paced(run: Soak, rates: dict[str, float], seconds: float, start: float) -> None:
    """Send a run's whole load, both kinds side by side, from `start` (loop time)."""
    await asyncio.gather(
        run.pace("brief", rates["brief"], seconds, start, run.brief),
        run.pace("ingest", rates["ingest"], seconds, start, run.ingest),
    )


def parser() -> argparse.ArgumentParser:
    args = argparse.ArgumentParser(prog="python -m memmesh.bench.soak", description=__doc__)
    length = args.add_mutually_exclusive_group()
    length.add_argument("--minutes", type=float, default=10.0, help="how long (default 10)")
    length.add_argument("--seconds", type=float, help="how long, in seconds instead")
    args.add_argument("--brief-rate", type=float, default=50.0, help="Briefs per second")
    args.add_argument("--ingest-rate", type=float, default=50.0, help="Ingests per second")
    args.add_argument("--callers", type=int, default=8, help="gateway clients (channels)")
    args.add_argument("--users", type=int, default=250, help="distinct users, taken in turn")
    args.add_argument("--window-s", type=float, default=60.0, help="reporting window")
    args.add_argument(
        "--warmup-s", type=float, default=90.0, help="load before measuring (not counted)"
    )
    args.add_argument(
        "--history", type=int, default=150, help="turns each user said before (not measured)"
    )
    args.add_argument("--max-in-flight", type=int, default=512, help="outstanding requests")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    options = parser().parse_args(argv)
    seconds = options.seconds if options.seconds is not None else options.minutes * 60
    if seconds <= 0 or options.window_s <= 0 or options.callers < 1 or options.users < 1:
        parser().error("duration, --window-s, --callers and --users must be positive")
    if options.history < 0:
        parser().error("--history must not be negative")
    rates = {"brief": options.brief_rate, "ingest": options.ingest_rate}
    with tempfile.TemporaryDirectory() as data_dir:
        mesh = gateway_mesh(data_dir, "sqlite", None)
        started = time.monotonic()
        mesh.start()
        print(
            f"mesh up in {time.monotonic() - started:.1f} s (sqlite); {seconds:g} s at "
            f"{rates['brief']:g} Brief/s + {rates['ingest']:g} Ingest/s, "
            f"{options.callers} callers, {options.users} users with {options.history} turns "
            "of history each",
            flush=True,
        )
        try:
            pids = {name: engine.process.pid for name, engine in mesh.running.items()}
            summary = asyncio.run(
                soak(
                    mesh.addrs["gateway"],
                    pids,
                    seconds,
                    rates,
                    options.callers,
                    options.users,
                    options.window_s,
                    options.max_in_flight,
                    options.warmup_s,
                    options.history,
                )
            )
        finally:
            mesh.stop()
    print(f"summary: {json.dumps(summary, sort_keys=True)}")
    verdict = "PASS" if summary["pass"] else "FAIL"
    print(
        f"verdict: {verdict} (p99 within ±{P99_DRIFT_LIMIT_PCT:g} % first to last window, "
        f"RSS growth < {RSS_GROWTH_LIMIT_PCT:g} % per engine)",
        flush=True,
    )
    return 0 if summary["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
