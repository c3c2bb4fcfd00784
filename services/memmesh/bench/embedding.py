"""Sentence encoder latency: `python -m memmesh.bench.embedding [--calls N] [--callers N]`.

One 12-word sentence and a batch of 4 clauses, p50/p99 in one process with numpy's BLAS on
1 thread and on every core; then N callers in separate processes sharing the machine, each
with 1 and with every BLAS thread; and the resident memory of a process with the encoder
loaded; then the shared encoder's int8 model on the same texts. The cache is off, so every
call runs the model. The last line is all figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from collections.abc import Sequence
from multiprocessing.synchronize import Barrier

from threadpoolctl import threadpool_info, threadpool_limits

from memmesh.bench.stats import summary
from memmesh.embedding import Encoder

SENTENCE = "Remind me to call my sister Anna on Sunday evening after work."  # 12 words
CLAUSES = (
    "my daughter starts school in September",
    "she is allergic to peanuts",
    "we moved to Lisbon last spring",
    "remind me to water the plants on Friday",
)
WARMUP_CALLS = 20


def _blas_threads() -> int:
    return max((pool["num_threads"] for pool in threadpool_info()), default=1)


def time_calls(
    encoder: Encoder,
    texts: Sequence[str],
    calls: int,
    budget_s: float = 60.0,
    warmup_calls: int = WARMUP_CALLS,
) -> tuple[list[float], list[float]]:
    """Wall and CPU (all threads of the process) milliseconds of up to `calls` calls, stopping early once
    `budget_s` has passed. CPU time shows the cost of a call when other processes share
    the cores; wall time is what a caller waits."""
    for _ in range(warmup_calls):
        encoder.encode(texts)
    wall_ms: list[float] = []
    cpu_ms: list[float] = []
    deadline = time.perf_counter() + budget_s
    for _ in range(calls):
        start, start_cpu = time.perf_counter(), time.process_time()
        encoder.encode(texts)
        cpu_ms.append((time.process_time() - start_cpu) * 1000)
        wall_ms.append((time.perf_counter() - start) * 1000)
        if start > deadline:
            break
    return wall_ms, cpu_ms


def _rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _caller(
    threads: int, calls: int, barrier: Barrier, results: multiprocessing.Queue[object]
) -> None:
    threadpool_limits(limits=threads, user_api="blas")
    encoder = Encoder.load(cache_size=0)
    for _ in range(WARMUP_CALLS):  # alone, before the others start
        encoder.encode([SENTENCE])
    barrier.wait()
    # Oversubscribed BLAS threads can make a call take seconds: bound the run in time too.
    results.put(time_calls(encoder, [SENTENCE], calls, budget_s=20.0, warmup_calls=0)[0])


def bench_concurrent(callers: int, threads: int, calls: int) -> dict[str, float]:
    """`callers` processes each encoding the sentence up to `calls` times at once."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(callers + 1)
    results: multiprocessing.Queue[object] = context.Queue()
    processes = [
        context.Process(target=_caller, args=(threads, calls, barrier, results))
        for _ in range(callers)
    ]
    for process in processes:
        process.start()
    barrier.wait()
    start = time.perf_counter()
    samples: list[float] = []
    for _ in processes:
        got = results.get()
        assert isinstance(got, list)
        samples.extend(got)
    elapsed = time.perf_counter() - start
    for process in processes:
        process.join()
    return {**summary(samples), "sentences_per_s": round(len(samples) / elapsed, 1)}


def _time_texts(encoder: Encoder, calls: int, label: str, results: dict[str, object]) -> None:
    """Latency of the one sentence and of the four clauses, into `results` under `label`."""
    for name, texts in (("one_sentence", [SENTENCE]), ("four_clauses", list(CLAUSES))):
        wall_ms, cpu_ms = time_calls(encoder, texts, calls)
        figures = {**summary(wall_ms), "cpu_p50_ms": summary(cpu_ms)["p50_ms"]}
        results[f"{name}.{label}"] = figures
        print(f"{name}, {label}: {json.dumps(figures)}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="timed calls per measurement")
    parser.add_argument("--callers", type=int, default=8, help="concurrent caller processes")
    args = parser.parse_args(argv)
    results: dict[str, object] = {"load_average_1m_at_start": round(os.getloadavg()[0], 1)}
    rss_before = _rss_mib()
    start = time.perf_counter()
    encoder = Encoder.load(cache_size=0)
    results["load_s"] = round(time.perf_counter() - start, 3)
    encoder.encode([SENTENCE])
    results["rss_mib"] = {"before_load": rss_before, "encoder_loaded": _rss_mib()}
    print(f"load: {results['load_s']} s, resident memory (MiB): {json.dumps(results['rss_mib'])}")
    cores = os.cpu_count() or 1
    for threads in sorted({1, cores}):
        with threadpool_limits(limits=threads, user_api="blas"):
            assert _blas_threads() == threads
            _time_texts(encoder, args.calls, f"blas_threads_{threads}", results)
    # The shared encoder runs its dense products in int8, one text a run (default_encoder).
    _time_texts(Encoder.load(cache_size=0, quantized=True), args.calls, "int8", results)
    for threads in sorted({1, cores}):
        figures = bench_concurrent(args.callers, threads, args.calls)
        results[f"concurrent_{args.callers}_processes.blas_threads_{threads}"] = figures
        print(
            f"{args.callers} caller processes, one sentence each call, BLAS threads {threads}: "
            f"{json.dumps(figures)}",
            flush=True,
        )
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
