"""Retrieve latency in-process over one large user (`python -m memmesh.bench.retrieve`).

The corpus is synthetic and seeded: words drawn from a Zipf-like distribution over a
3,000-word vocabulary, weight 1 / (rank + head_offset). The default offset of 10 gives the
most frequent word about 1.7 % of the tokens, like the most frequent content word of
conversational English once stop words are gone; an offset of 0 (12 % for the top word,
as if stop words were indexed) is the adversarial case.
The timed path is the engine's read path without gRPC: generation check against the
SQLite store, query analysis, scoring, selection and the proto response.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import tempfile
import time
from pathlib import Path

from memmesh.bench.stats import percentile
from memmesh.common.v1 import memory_pb2
from memmesh.embedding import default_encoder
from memmesh.embedding.static import default_static_encoder
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.adapters.sql_store import SqlRankerStore
from memmesh.engines.retrieval_ranker.domain.dense import RetrievalMode
from memmesh.engines.retrieval_ranker.domain.documents import Caps, IndexDoc
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import UserIndex
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.runtime.timeconv import timestamp_of

TENANT, USER = "bench-tenant", "bench-user"
VOCABULARY_SIZE = 3_000
CAPS = Caps(max_atoms=20, max_turns=2, max_digests=2)
# Real English requests for the query-vector timing (the synthetic words are not English).
EMBED_QUERIES = (
    "what does my future wife do for work",
    "when did Caroline go to the LGBTQ support group last summer",
    "get the car ready for winter",
    "what should I cook tonight for my sister and her two kids",
)


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < VOCABULARY_SIZE:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 9))))
    return sorted(words)


def _sentence(rng: random.Random, words: list[str], weights: list[float], length: int) -> str:
    return " ".join(rng.choices(words, weights=weights, k=length))


def analyzer_for(mode: RetrievalMode) -> Analyzer:
    """The engine's analyzer for a retrieval mode (unless BM25, the static table and the
    sentence encoder, as the engine has them by default)."""
    if mode is RetrievalMode.BM25:
        return Analyzer()
    return Analyzer(default_static_encoder(), default_encoder())


def corpus(
    atoms: int,
    turns: int,
    head_offset: int = 10,
    seed: int = 7,
    analyzer: Analyzer | None = None,
) -> tuple[list[IndexDoc], list[str]]:
    """Seeded documents (atoms, then turns) and 200 queries."""
    rng = random.Random(seed)
    words = _vocabulary(rng)
    rng.shuffle(words)
    weights = [1 / (rank + 1 + head_offset) for rank in range(len(words))]
    analyzer = analyzer or Analyzer()
    docs = []
    for n in range(atoms):
        atom = memory_pb2.Atom(
            atom_id=f"atom-{n:06d}",
            key=f"{rng.choice(words)}.{rng.choice(words)}",
            text=_sentence(rng, words, weights, rng.randint(6, 14)),
            provenance=memory_pb2.Provenance.ValueType(rng.randint(1, 4)),
            confidence_bp=rng.randint(4000, 10000),
            pinned=rng.random() < 0.05,
            use_count=rng.randint(0, 30),
            critical_tokens=[rng.choice(words).capitalize()],
            create_time=timestamp_of(1_700_000_000_000_000 + n),
        )
        docs.append(mapping.index_doc(ranker_pb.Document(atom=atom), analyzer))
    for n in range(turns):
        turn = memory_pb2.Turn(
            turn_id=f"turn-{n:06d}",
            session_id=f"session-{n // 40}",
            role=memory_pb2.ROLE_USER if n % 2 == 0 else memory_pb2.ROLE_ASSISTANT,
            text=_sentence(rng, words, weights, rng.randint(8, 30)),
            time=timestamp_of(1_700_000_000_000_000 + n * 1_000_000),
        )
        docs.append(mapping.index_doc(ranker_pb.Document(turn=turn), analyzer))
    queries = [_sentence(rng, words, weights, rng.randint(4, 10)) for _ in range(200)]
    return docs, queries


async def _bench(
    atoms: int, turns: int, rounds: int, head_offset: int, data_dir: Path, mode: RetrievalMode
) -> dict[str, object]:
    analyzer = analyzer_for(mode)
    docs, queries = corpus(atoms, turns, head_offset, analyzer=analyzer)
    store = await SqlRankerStore.open("sqlite", data_dir)
    service = RankerService(store, analyzer, mapping.DocumentCodec(analyzer), mode=mode)
    try:
        await service.upsert(TENANT, USER, docs)
        started = time.perf_counter()
        await service.describe(TENANT, USER)
        load_ms = (time.perf_counter() - started) * 1000
        samples = []
        for n in range(rounds):
            query = queries[n % len(queries)]
            started = time.perf_counter()
            mapping.retrieve_response(await service.retrieve(TENANT, USER, query, CAPS))
            samples.append((time.perf_counter() - started) * 1000)
        # The query's dense vectors alone (part of every Retrieve above), on LoCoMo-like text,
        # never from the sentence encoder's cache (a request seldom comes twice).
        embeds = []
        for n in range(rounds):
            default_encoder().clear_cache()
            started = time.perf_counter()
            analyzer.query_vectors(EMBED_QUERIES[n % len(EMBED_QUERIES)])
            embeds.append((time.perf_counter() - started) * 1000)
    finally:
        await store.close()
    return {
        "mode": mode.value,
        "atoms": atoms,
        "turns": turns,
        "head_offset": head_offset,
        "retrieve_p50_ms": round(percentile(samples, 0.50), 3),
        "retrieve_p99_ms": round(percentile(samples, 0.99), 3),
        "first_read_ms": round(load_ms, 1),
        "query_vector_p50_ms": round(percentile(embeds, 0.50), 3),
        "query_vector_p99_ms": round(percentile(embeds, 0.99), 3),
    }


def bench_retrieve(
    atoms: int = 10_000,
    turns: int = 10_000,
    rounds: int = 1_000,
    head_offset: int = 10,
    mode: RetrievalMode = RetrievalMode.FUSED,
) -> dict[str, object]:
    """Retrieve p50/p99 in milliseconds, in-process, over one user with `atoms` + `turns` documents."""
    with tempfile.TemporaryDirectory() as data_dir:
        return asyncio.run(_bench(atoms, turns, rounds, head_offset, Path(data_dir), mode))


def _resident_bytes() -> int:
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def index_memory(
    atoms: int = 5_000, turns: int = 5_000, mode: RetrievalMode = RetrievalMode.FUSED
) -> dict[str, object]:
    """Resident memory one user's index adds (documents included) beside the estimate the
    ranker's byte-bounded cache counts, per 10,000 documents (Linux /proc)."""
    analyzer = analyzer_for(mode)
    before = _resident_bytes()
    docs, _ = corpus(atoms, turns, analyzer=analyzer)
    index = UserIndex(1, docs)
    del docs
    per_10k = 10_000 / (atoms + turns)
    return {
        "mode": mode.value,
        "documents": atoms + turns,
        "rss_mb_per_10k_documents": round((_resident_bytes() - before) * per_10k / 2**20, 1),
        "estimate_mb_per_10k_documents": round(index.approximate_bytes() * per_10k / 2**20, 1),
    }


if __name__ == "__main__":
    for mode in (RetrievalMode.BM25, RetrievalMode.FUSED):
        print(json.dumps(index_memory(mode=mode)))
    for mode in (RetrievalMode.BM25, RetrievalMode.FUSED):
        print(json.dumps(bench_retrieve(mode=mode)))
        print(json.dumps(bench_retrieve(head_offset=0, mode=mode)))
