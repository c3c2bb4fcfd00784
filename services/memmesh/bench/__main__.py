"""`make bench`: prints every benchmark's figures; the last line is all of them as JSON.

`python -m memmesh.bench [section ...]` runs only the named sections
(host, foundation, filter, retrieve, process, restore, turns, large; `brief` is the Brief half of
`turns`, without its Ingest runs, and is not part of a full run). MEMMESH_BENCH_ONLY=sqlite
(or postgres+redis) runs only that storage configuration; `large` (one user with 100,000
documents) runs on SQLite only.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

from memmesh.bench import foundation, host, large, turns
from memmesh.bench.exposure_filter import bench_filter
from memmesh.bench.process import bench_process, bench_process_multi
from memmesh.bench.restore import bench_restore
from memmesh.bench.retrieve import bench_retrieve

POSTGRES_URL = os.environ.get(
    "MEMMESH_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("MEMMESH_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
ALL_CONFIGURATIONS = (("sqlite", "sqlite", None), ("postgres+redis", POSTGRES_URL, REDIS_URL))
ONLY = os.environ.get("MEMMESH_BENCH_ONLY", "")
CONFIGURATIONS = tuple(c for c in ALL_CONFIGURATIONS if not ONLY or c[0] == ONLY)
SECTIONS = ("host", "foundation", "filter", "retrieve", "process", "restore", "turns", "large")


def _print(name: str, figures: object) -> None:
    print(f"{name}: {json.dumps(figures, sort_keys=True)}", flush=True)


def main(argv: list[str]) -> None:
    wanted = argv or list(SECTIONS)
    results: dict[str, Mapping[str, object]] = {}
    figures: Mapping[str, object]
    if "host" in wanted:
        results["host"] = figures = host.run()
        _print("This host: an empty gRPC call, one query encoded, plain Python", figures)
    if "foundation" in wanted:
        for label, storage, redis_url in CONFIGURATIONS:
            results[f"foundation.{label}"] = figures = foundation.run(storage, redis_url, label)
            _print(f"Ledger Append and CurrentState Get [{label}]", figures)
    if "filter" in wanted:
        results["exposure_filter_1k_atoms_in_process"] = figures = bench_filter()
        _print("ExposureGuard Filter over 1,000 atoms, in-process", figures)
    if "retrieve" in wanted:
        results["retrieve_10k_atoms_10k_turns_in_process"] = figures = bench_retrieve()
        _print("RetrievalRanker Retrieve, 10k atoms + 10k turns, in-process", figures)
    if "process" in wanted:
        results["atom_extractor_process_grpc"] = figures = bench_process()
        _print("AtomExtractor Process over gRPC, typical user turn, engines in-process", figures)
        results["atom_extractor_process_grpc_multi_process"] = figures = bench_process_multi()
        _print("AtomExtractor Process over gRPC, typical user turn, engine processes", figures)
    if "restore" in wanted:
        for label, storage, _ in CONFIGURATIONS:
            results[f"restore_10k_atoms.{label}"] = figures = bench_restore(storage_url=storage)
            _print(f"OutboxSync restore of 10k atoms [{label}]", figures)
    if "brief" in wanted:
        for label, storage, redis_url in CONFIGURATIONS:
            results[f"brief.{label}"] = figures = turns.run(storage, redis_url, label, ingest=False)
            _print(f"Gateway Brief alone, multi-process mesh [{label}]", figures)
    if "turns" in wanted:
        for label, storage, redis_url in CONFIGURATIONS:
            results[f"turns.{label}"] = figures = turns.run(storage, redis_url, label)
            _print(f"Gateway Brief and Ingest, multi-process mesh [{label}]", figures)
    if "large" in wanted:
        results["large_user_100k_documents.sqlite"] = figures = large.run()
        _print("Gateway Brief for one user with 100,000 documents [sqlite]", figures)
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
