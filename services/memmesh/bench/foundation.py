"""Ledger Append and CurrentState Get over gRPC against real engine processes."""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid

import redis.asyncio as aioredis
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.bench.stats import summary
from memmesh.common.v1 import scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh
from memmesh.storage.cache import user_key

TOKEN = "bench-token"
NOW = Timestamp(seconds=1_767_225_600)


def _scope() -> scope_pb2.UserScope:
    token = uuid.uuid4().hex[:10]
    return scope_pb2.UserScope(tenant_id=f"bench-{token}", user_id=f"u-{token}")


def _append(scope: scope_pb2.UserScope, key: str, key_id: str) -> ledger_pb.AppendRequest:
    """One event, naming the user's subject key as the shared writer does (the Ledger checks
    it is still the user's on every append)."""
    return ledger_pb.AppendRequest(
        scope=scope,
        subject_key_id=key_id,
        events=[
            ledger_pb.EventInput(
                idempotency_key=key,
                event_type="BENCH_EVENT",
                reason_code="BENCH",
                attributes=[ledger_pb.Attribute(name="atom_id", string_value=key)],
                occur_time=NOW,
            )
        ],
    )


async def _key_id(stub: ledger_grpc.LedgerServiceStub, scope: scope_pb2.UserScope) -> str:
    reply = await stub.GetSubjectKey(ledger_pb.GetSubjectKeyRequest(scope=scope))
    return str(reply.key_id)


async def _append_latency(addr: str, count: int) -> dict[str, float]:
    async with engine_channel(addr, TOKEN) as channel:
        stub = ledger_grpc.LedgerServiceStub(channel)
        scope, samples = _scope(), []
        key_id = await _key_id(stub, scope)
        for n in range(50):  # warm-up
            await stub.Append(_append(scope, f"warm-{n}", key_id))
        for n in range(count):
            started = time.perf_counter()
            await stub.Append(_append(scope, f"k{n}", key_id))
            samples.append((time.perf_counter() - started) * 1000)
    return summary(samples)


async def _append_throughput(addr: str, clients: int, seconds: float, shared_stream: bool) -> float:
    """Appends per second from concurrent clients, each on its own user's stream or all on one
    (the hardest case: every append of a stream serialises on it)."""
    shared = _scope()
    done = 0

    async def client(n: int) -> None:
        nonlocal done
        scope = shared if shared_stream else _scope()
        async with engine_channel(addr, TOKEN) as channel:
            stub = ledger_grpc.LedgerServiceStub(channel)
            key_id = await _key_id(stub, scope)
            deadline, i = time.perf_counter() + seconds, 0
            while time.perf_counter() < deadline:
                await stub.Append(_append(scope, f"c{n}-{i}", key_id))
                i += 1
                done += 1

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    return done / (time.perf_counter() - started)


async def _prepare_users(addr: str, users: int) -> list[scope_pb2.UserScope]:
    scopes = [_scope() for _ in range(users)]
    async with engine_channel(addr, TOKEN) as channel:
        stub = state_grpc.CurrentStateServiceStub(channel)
        for n, scope in enumerate(scopes):
            await stub.Apply(
                state_pb.ApplyRequest(
                    scope=scope,
                    change=state_pb.StateChange(set_display_name=f"User {n}"),
                    any_version=True,
                    reason_code="BENCH",
                    idempotency_key="bench",
                    now=NOW,
                )
            )
    return scopes


async def _get_latency(
    addr: str, scopes: list[scope_pb2.UserScope]
) -> tuple[dict[str, float], dict[str, float]]:
    """First Get of each user misses the cache (freshly started engine, keys dropped); the second hits."""
    async with engine_channel(addr, TOKEN) as channel:
        stub = state_grpc.CurrentStateServiceStub(channel)
        uncached, cached = [], []
        for scope in scopes:
            started = time.perf_counter()
            await stub.Get(state_pb.GetRequest(scope=scope))
            uncached.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await stub.Get(state_pb.GetRequest(scope=scope))
            cached.append((time.perf_counter() - started) * 1000)
    return summary(uncached), summary(cached)


async def _drop_cached_states(redis_url: str | None, scopes: list[scope_pb2.UserScope]) -> None:
    if not redis_url:
        return

    client = aioredis.Redis.from_url(redis_url)
    await client.delete(*(user_key(s.tenant_id, s.user_id, "state") for s in scopes))
    await client.aclose()


def run(storage_url: str, redis_url: str | None, label: str) -> dict[str, object]:
    """All foundation figures on one storage configuration."""
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            "MEMMESH_DATA_DIR": data_dir,
            "MEMMESH_STORAGE_URL": storage_url,
            "MEMMESH_INTERNAL_TOKEN": TOKEN,
            "MEMMESH_LOG_LEVEL": "WARNING",
        }
        if redis_url:
            env["MEMMESH_REDIS_URL"] = redis_url
        mesh = Mesh(["ledger", "current_state"], env=env)
        mesh.start()
        try:
            ledger, state = mesh.addrs["ledger"], mesh.addrs["current_state"]
            append = asyncio.run(_append_latency(ledger, 2000))
            throughput = asyncio.run(
                _append_throughput(ledger, clients=8, seconds=3.0, shared_stream=False)
            )
            one_stream = asyncio.run(
                _append_throughput(ledger, clients=8, seconds=3.0, shared_stream=True)
            )
            scopes = asyncio.run(_prepare_users(state, 500))
            mesh.kill("current_state")
            asyncio.run(_drop_cached_states(redis_url, scopes))
            mesh.start(["current_state"])
            uncached, cached = asyncio.run(_get_latency(state, scopes))
        finally:
            mesh.stop()
    return {
        "storage": label,
        "ledger_append_1_client": append,
        "ledger_append_8_clients_per_s": round(throughput),
        "ledger_append_8_clients_one_stream_per_s": round(one_stream),
        "state_get_uncached": uncached,
        "state_get_cached": cached,
    }
