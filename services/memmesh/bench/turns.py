"""Brief and Ingest through the gateway over the multi-process mesh, with a large memory.

Brief: a user with 10,000 archived turns and 1,000 then 10,000 atoms; latency of one
caller, CPU per full Brief summed over every engine process, and throughput with 8 and
16 concurrent callers (with how many came back empty). Turns are archived through the
ThreadStore, which indexes them itself; atoms are written straight into
the retrieval index (the capsule's derived copy the composer reads), since pushing
10,000 distinct facts through extraction would measure extraction rather than Brief.

Ingest: latency for users with 1,000 and 10,000 turns of history (one in ten a fact that
went through extraction), and throughput with 8 concurrent callers.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time

import grpc

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.bench.cpu import cpu_seconds, rss_bytes
from memmesh.bench.stats import summary
from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh, built_engines
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

TOKEN = "bench-token"
TENANT, KEY = "bench", "bench-key"
START_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
TOPICS = [
    "coffee",
    "tea",
    "hiking",
    "running",
    "piano",
    "guitar",
    "python",
    "rust",
    "garden",
    "tomatoes",
    "sister",
    "brother",
    "mother",
    "dentist",
    "doctor",
    "school",
    "kids",
    "soccer",
    "chess",
    "jazz",
    "opera",
    "sushi",
    "pasta",
    "vegan",
    "peanuts",
    "allergy",
    "lisbon",
    "berlin",
    "tokyo",
    "boston",
    "camera",
    "bicycle",
    "yoga",
    "swimming",
    "novel",
    "poetry",
    "budget",
    "mortgage",
    "podcast",
    "movies",
]
RELATIONS = ["Sarah", "Kwame", "Aisha", "Tomasz", "Lee", "Marta", "Priya", "Jonas"]


def _atom(n: int, rng: random.Random) -> memory_pb2.Atom:
    topic = TOPICS[n % len(TOPICS)]
    other = rng.choice(TOPICS)
    name = rng.choice(RELATIONS)
    return memory_pb2.Atom(
        atom_id=f"atom-{n:05d}",
        key=f"preference.{topic}.{n}",
        text=f"User likes {topic} with {name} and {other}.",
        category=memory_pb2.ATOM_CATEGORY_PREFERENCE,
        type=memory_pb2.ATOM_TYPE_USER_FACT,
        provenance=memory_pb2.PROVENANCE_USER_STATED,
        confidence_bp=8000 + rng.randint(0, 1999),
        exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
        critical_tokens=[name],
        create_time=timestamp_of(START_US),
        confirm_time=timestamp_of(START_US),
        use_count=rng.randint(0, 20),
        version=1,
        evidence_turn_ids=[f"turn-{n % 10_000:05d}"],
        status=memory_pb2.ATOM_STATUS_ACTIVE,
        topics=[topic],
    )


async def _seed(
    addrs: dict[str, str], scope: scope_pb2.UserScope, atoms: int, turns: int, atoms_from: int = 0
) -> None:
    rng = random.Random(7)
    async with (
        engine_channel(addrs["thread_store"], TOKEN, 30.0) as thread_channel,
        engine_channel(addrs["retrieval_ranker"], TOKEN, 30.0) as ranker_channel,
    ):
        threads = thread_grpc.ThreadStoreServiceStub(thread_channel)
        ranker = ranker_grpc.RetrievalRankerServiceStub(ranker_channel)
        batch: list[ranker_pb.Document] = []
        for n in range(turns):
            turn = memory_pb2.Turn(
                turn_id=f"turn-{n:05d}",
                session_id=f"s-{n // 50}",
                role=memory_pb2.ROLE_USER if n % 2 == 0 else memory_pb2.ROLE_ASSISTANT,
                text=f"we talked about {rng.choice(TOPICS)} and {rng.choice(TOPICS)} with {rng.choice(RELATIONS)}",
                time=timestamp_of(START_US + n * 60_000_000),
            )
            # The ThreadStore indexes each archived turn itself (through its outbox).
            await threads.AppendTurn(thread_pb.AppendTurnRequest(scope=scope, turn=turn))
        for n in range(atoms_from, atoms):
            atom = _atom(n, rng)
            batch.append(ranker_pb.Document(atom=atom))
            if len(batch) == 500:
                await ranker.Upsert(ranker_pb.UpsertRequest(scope=scope, documents=batch))
                batch = []
        if batch:
            await ranker.Upsert(ranker_pb.UpsertRequest(scope=scope, documents=batch))


def _gateway_tls() -> grpc.ChannelCredentials | None:
    """TLS to the gateway when the bench runs the mesh with MEMMESH_TLS_DIR (its CA)."""
    settings = MeshSettings()
    if not settings.tls_enabled:
        return None
    return grpc.ssl_channel_credentials(settings.tls_files("client").ca.read_bytes())


def _query(rng: random.Random) -> str:
    return f"what do I like about {rng.choice(TOPICS)} and {rng.choice(TOPICS)}?"


async def _brief_latency(
    client: GatewayClient, user: str, count: int
) -> tuple[dict[str, float], int, int]:
    rng, samples, degraded, sizes = random.Random(11), [], 0, 0
    now = START_US + 10_001 * 60_000_000
    for _ in range(30):  # warm-up: channels, the ranker's in-memory index of the user
        await client.brief(user, "bench-session", now, _query(rng), timeout=30)
    for _ in range(count):
        started = time.perf_counter()
        response = await client.brief(user, "bench-session", now, _query(rng))
        samples.append((time.perf_counter() - started) * 1000)
        degraded += int(response.degraded)
        sizes = max(sizes, response.counters.context_bundle_bytes)
    return summary(samples), degraded, sizes


async def _brief_throughput(addr: str, user: str, callers: int, seconds: float) -> dict[str, float]:
    """Briefs answered per second by `callers` concurrent callers, and how many came back empty."""
    done, empty = 0, 0
    now = START_US + 10_001 * 60_000_000

    async def caller(n: int) -> None:
        nonlocal done, empty
        rng = random.Random(n)
        async with gateway_client(addr) as client:
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                response = await client.brief(user, f"bench-{n}", now, _query(rng))
                done += 1
                # Failed closed: degraded with no part named as the only loss (Tier 2 keeps a bundle).
                empty += int(response.degraded and not response.degraded_parts)

    started = time.perf_counter()
    await asyncio.gather(*(caller(n) for n in range(callers)))
    elapsed = time.perf_counter() - started
    return {
        "per_s": round(done / elapsed),
        "full_per_s": round((done - empty) / elapsed),
        "empty": empty,
        "n": done,
    }


async def _brief_cpu_ms(
    client: GatewayClient, user: str, pids: dict[str, int], count: int
) -> tuple[float, dict[str, float]]:
    """CPU milliseconds per full Brief, summed over every engine process and per engine."""
    rng = random.Random(13)
    now = START_US + 10_001 * 60_000_000
    before, full = {name: cpu_seconds([pid]) for name, pid in pids.items()}, 0
    for _ in range(count):
        response = await client.brief(user, "bench-cpu", now, _query(rng))
        full += int(not (response.degraded and not response.degraded_parts))
    used = {name: (cpu_seconds([pid]) - before[name]) * 1000 for name, pid in pids.items()}
    per_engine = {name: round(ms / max(full, 1), 2) for name, ms in used.items()}
    return round(sum(used.values()) / max(full, 1), 2), per_engine


_SENTENCES = [
    "my sister {name} lives in {city}",
    "I really love {topic}",
    "I'm allergic to {topic}",
    "remind me to call {name} tomorrow",
    "I work as a nurse",
    "we should talk about {topic} later",
]


def _ingest_text(rng: random.Random) -> str:
    return rng.choice(_SENTENCES).format(
        name=rng.choice(RELATIONS),
        city=rng.choice(["Lisbon", "Berlin", "Tokyo"]),
        topic=rng.choice(TOPICS),
    )


async def _seed_history(addrs: dict[str, str], scope: scope_pb2.UserScope, turns: int) -> None:
    """A user with `turns` archived and indexed turns, one in ten of them a stated fact
    that went through extraction (so the capsule grows with the history as in real use)."""
    await _seed(addrs, scope, atoms=0, turns=turns)
    rng = random.Random(3)
    async with engine_channel(addrs["atom_extractor"], TOKEN, 30.0) as channel:
        extractor = extractor_grpc.AtomExtractorServiceStub(channel)
        for n in range(0, turns, 10):
            time_us = START_US + n * 60_000_000
            fact = f"my friend {rng.choice(RELATIONS)}{n} lives in {rng.choice(['Lisbon', 'Berlin', 'Tokyo', 'Oslo'])}"
            turn = memory_pb2.Turn(
                turn_id=f"fact-{n:05d}",
                session_id=f"s-{n // 50}",
                role=memory_pb2.ROLE_USER,
                text=fact,
                time=timestamp_of(time_us),
            )
            await extractor.Process(
                extractor_pb.ProcessRequest(scope=scope, turn=turn, now=timestamp_of(time_us))
            )


async def _ingest_latency(
    client: GatewayClient, user: str, count: int, start_us: int
) -> dict[str, float]:
    rng, samples = random.Random(5), []
    for n in range(count):
        started = time.perf_counter()
        await client.ingest(
            user,
            f"ingest-{n // 20}",
            f"ingest-turn-{n}",
            "user",
            _ingest_text(rng),
            start_us + n * 30_000_000,
        )
        samples.append((time.perf_counter() - started) * 1000)
    return summary(samples)


async def _ingest_throughput(
    addr: str, user: str, callers: int, seconds: float
) -> dict[str, float]:
    """User turns ingested per second by `callers` concurrent callers, each its own user."""
    done = 0

    async def caller(n: int) -> None:
        nonlocal done
        rng = random.Random(100 + n)
        async with gateway_client(addr) as client:
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                await client.ingest(
                    f"{user}-{n}",
                    f"s-{done // 20}",
                    f"t-{n}-{done}",
                    "user",
                    _ingest_text(rng),
                    START_US + done * 30_000_000,
                )
                done += 1

    started = time.perf_counter()
    await asyncio.gather(*(caller(n) for n in range(callers)))
    return {"per_s": round(done / (time.perf_counter() - started)), "n": done}


def gateway_mesh(data_dir: str, storage_url: str, redis_url: str | None) -> Mesh:
    """Every built engine on loopback, not yet started, the gateway taking the bench tenant."""
    env = {
        "MEMMESH_DATA_DIR": data_dir,
        "MEMMESH_STORAGE_URL": storage_url,
        "MEMMESH_INTERNAL_TOKEN": TOKEN,
        "MEMMESH_LOG_LEVEL": "WARNING",
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{KEY}"}}',
    }
    if redis_url:
        env["MEMMESH_REDIS_URL"] = redis_url
    return Mesh(built_engines(), env=env)


def gateway_client(addr: str) -> GatewayClient:
    """A client of the bench tenant (TLS when the mesh runs it)."""
    return GatewayClient(addr, KEY, tenant_id=TENANT, credentials=_gateway_tls())


def run(
    storage_url: str, redis_url: str | None, label: str, *, ingest: bool = True
) -> dict[str, object]:
    """Brief and Ingest figures on one storage configuration (Brief only without `ingest`)."""
    figures: dict[str, object] = {"storage": label}
    with tempfile.TemporaryDirectory() as data_dir:
        mesh = gateway_mesh(data_dir, storage_url, redis_url)
        mesh.start()
        try:
            user = f"bench-user-{time.time_ns()}"
            scope = scope_pb2.UserScope(tenant_id=TENANT, user_id=user)
            pids = {name: engine.process.pid for name, engine in mesh.running.items()}

            async def measure() -> None:
                gateway = mesh.addrs["gateway"]
                async with gateway_client(gateway) as client:
                    await _seed(mesh.addrs, scope, atoms=1_000, turns=10_000)
                    (
                        figures["brief_1k_atoms"],
                        figures["brief_1k_degraded"],
                        figures["brief_1k_max_bytes"],
                    ) = await _brief_latency(client, user, 500)
                    await _seed(mesh.addrs, scope, atoms=10_000, turns=0, atoms_from=1_000)
                    (
                        figures["brief_10k_atoms"],
                        figures["brief_10k_degraded"],
                        figures["brief_10k_max_bytes"],
                    ) = await _brief_latency(client, user, 500)
                    (
                        figures["brief_10k_cpu_ms_per_full_brief"],
                        figures["brief_10k_cpu_ms_by_engine"],
                    ) = await _brief_cpu_ms(client, user, pids, 300)
                    figures["brief_8_callers"] = await _brief_throughput(
                        gateway, user, callers=8, seconds=5.0
                    )
                    figures["brief_16_callers"] = await _brief_throughput(
                        gateway, user, callers=16, seconds=5.0
                    )
                    if not ingest:
                        return
                    for history in (1_000, 10_000):
                        with_history = f"{user}-history-{history}"
                        await _seed_history(
                            mesh.addrs,
                            scope_pb2.UserScope(tenant_id=TENANT, user_id=with_history),
                            history,
                        )
                        after_us = START_US + (history + 10) * 60_000_000
                        figures[f"ingest_{history // 1000}k_history"] = await _ingest_latency(
                            client, with_history, 300, after_us
                        )
                    figures["ingest_8_callers"] = await _ingest_throughput(
                        gateway, f"{user}-load", callers=8, seconds=5.0
                    )
                    # Every engine has served its share by now: the AtomExtractor holds the
                    # encoder and the command reader (its goal: 300 MB).
                    figures["rss_mb_by_engine"] = {
                        name: round(rss_bytes(pid) / 2**20, 1) for name, pid in pids.items()
                    }

            asyncio.run(measure())
        finally:
            mesh.stop()
    return figures
