"""`make bench`: prints every benchmark's figures; the last line is all of them as JSON."""

from __future__ import annotations

import json
import os

from memmesh.bench import foundation

POSTGRES_URL = os.environ.get("MEMMESH_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("MEMMESH_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


def main() -> None:
    results: dict[str, object] = {}
    for label, storage, redis_url in (("sqlite", "sqlite", None), ("postgres+redis", POSTGRES_URL, REDIS_URL)):
        figures = foundation.run(storage, redis_url, label)
        results[f"foundation.{label}"] = figures
        print(f"[{label}] Ledger Append, 1 client over gRPC: {figures['ledger_append_1_client']}")
        print(f"[{label}] Ledger Append, 8 clients (8 users): {figures['ledger_append_8_clients_per_s']} appends/s")
        print(f"[{label}] Ledger Append, 8 clients (1 user): {figures['ledger_append_8_clients_one_stream_per_s']} appends/s")
        print(f"[{label}] CurrentState Get uncached: {figures['state_get_uncached']}")
        print(f"[{label}] CurrentState Get cached:   {figures['state_get_cached']}", flush=True)
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
