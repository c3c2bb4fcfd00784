"""`make privacy-audit`: the seeded privacy audit on SQLite and on PostgreSQL + Redis.

    python -m memmesh.bench.privacy_audit [--users 200] [--turns 50] [--seed 8]
        [--backends sqlite,postgres] [--concurrency 4]

Prints the counts of each backend as one JSON document (the goal is 0 everywhere but
`controls_found`, which shows each scan reads what the mesh stored); exits 1 when any
forgotten copy or leaking Brief survives.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from memmesh.bench.privacy_audit.audit import audit_backend
from memmesh.bench.privacy_audit.driver import forget_everything_command
from memmesh.bench.privacy_audit.generator import generate


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m memmesh.bench.privacy_audit")
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--turns", type=int, default=50, help="ingested turns per user")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--time-limit",
        type=float,
        default=float("inf"),
        help="seconds per backend after which no new user starts (the rest is scanned)",
    )
    parser.add_argument("--nonce", type=int, default=None, help="marker tag (default: random)")
    args = parser.parse_args(argv)
    nonce = args.nonce if args.nonce is not None else time.time_ns()
    script = generate(
        seed=args.seed,
        users=args.users,
        turns_per_user=args.turns,
        tag_nonce=nonce,
        forget_everything_command=forget_everything_command(),
    )
    result: dict[str, object] = {
        "script": {
            **script.summary(),
            "seed": args.seed,
            "tag": script.tag,
            "forget_everything_via_command": script.forget_everything_command is not None,
        }
    }
    clean = True
    for backend in [b for b in args.backends.split(",") if b]:
        figures = audit_backend(
            script, backend, concurrency=args.concurrency, time_limit_s=args.time_limit
        )
        result[backend] = figures
        print(f"{backend}: {json.dumps(figures, ensure_ascii=False)}", file=sys.stderr, flush=True)
        clean = clean and figures["surviving_copies_total"] == 0 and figures["leaking_briefs"] == 0
    print(json.dumps(result, ensure_ascii=False, indent=1))
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
