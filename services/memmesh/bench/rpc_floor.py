"""What one gRPC call costs on this host before any engine work: the floor under every hop.

    .venv/bin/python -m memmesh.bench.rpc_floor [--calls N]

A server process answers an empty unary method (no interceptors, no validation, no
storage); a caller on this process sends it N calls one at a time, then from 8 concurrent
callers. CPU per call is read from /proc for both processes. Run once with the grpc.aio
server every engine uses and once with grpc's thread-pool server, for comparison. The
figure that matters is the sum over the calls one Brief makes (seven in the DESIGN flow:
gateway to composer, composer to four owners and the guard, gateway to the guard again).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent import futures
from typing import Any

import grpc
from google.protobuf.empty_pb2 import Empty

from memmesh.bench.cpu import cpu_seconds
from memmesh.runtime.supervisor import free_port

METHOD = "/memmesh.bench.Floor/Ping"
BRIEF_CALLS = 7
WARM_UP = 300


def _handlers(ping: Callable[..., Any]) -> grpc.GenericRpcHandler:
    method = grpc.unary_unary_rpc_method_handler(
        ping,
        request_deserializer=Empty.FromString,
        response_serializer=Empty.SerializeToString,
    )
    return grpc.method_handlers_generic_handler("memmesh.bench.Floor", {"Ping": method})


async def _serve_aio(port: int) -> None:
    async def ping(request: Empty, context: grpc.aio.ServicerContext) -> Empty:
        return Empty()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((_handlers(ping),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def _serve_threads(port: int) -> None:
    def ping(request: Empty, context: grpc.ServicerContext) -> Empty:
        return Empty()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((_handlers(ping),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    server.wait_for_termination()


async def _measure(port: int, server_pid: int, calls: int, callers: int) -> dict[str, float]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        await channel.channel_ready()
        ping = channel.unary_unary(
            METHOD,
            request_serializer=Empty.SerializeToString,
            response_deserializer=Empty.FromString,
        )
        for _ in range(WARM_UP):
            await ping(Empty())

        async def caller(count: int) -> None:
            for _ in range(count):
                await ping(Empty())

        per_caller = calls // callers
        server_cpu, own_cpu, wall = (
            cpu_seconds([server_pid]),
            time.process_time(),
            time.perf_counter(),
        )
        await asyncio.gather(*(caller(per_caller) for _ in range(callers)))
        made = per_caller * callers
        return {
            "caller_cpu_us": (time.process_time() - own_cpu) / made * 1e6,
            "server_cpu_us": (cpu_seconds([server_pid]) - server_cpu) / made * 1e6,
            "wall_us": (time.perf_counter() - wall) / made * 1e6,
        }


def floor(
    kind: str = "aio", calls: int = 2000, callers: tuple[int, ...] = (1,)
) -> dict[int, dict[str, float]]:
    """CPU and wall microseconds per empty call, by number of concurrent callers."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "memmesh.bench.rpc_floor", "--serve", kind, "--port", str(port)]
    )
    try:
        return {n: asyncio.run(_measure(port, server.pid, calls, n)) for n in callers}
    finally:
        server.terminate()
        server.wait()


def _run(kind: str, calls: int) -> None:
    for callers, figures in floor(kind, calls, (1, 8)).items():
        total = figures["caller_cpu_us"] + figures["server_cpu_us"]
        print(
            f"{kind:7} server, {callers} caller(s): CPU per call {figures['caller_cpu_us']:.0f} us "
            f"caller + {figures['server_cpu_us']:.0f} us server = {total:.0f} us; "
            f"{BRIEF_CALLS} calls = {BRIEF_CALLS * total / 1000:.2f} ms; "
            f"wall per call {figures['wall_us']:.0f} us"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--serve", choices=("aio", "threads"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "aio":
        asyncio.run(_serve_aio(args.port))
    elif args.serve == "threads":
        _serve_threads(args.port)
    else:
        for kind in ("aio", "threads"):
            _run(kind, args.calls)


if __name__ == "__main__":
    main()
