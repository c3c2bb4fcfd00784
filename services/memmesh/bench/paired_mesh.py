"""One side of the paired Brief benchmark (paired.py): run as a script with the PYTHONPATH of
the source tree under test, it starts that tree's mesh on SQLite in DATA_DIR, seeds the
bench user (10,000 archived turns and 10,000 atoms), prints one JSON line with the
gateway's address and the engines' process ids, and stops the mesh when its stdin closes.

It uses only what every tree since the Brief benchmark was written has: the bench tenant,
`turns._seed`, `Mesh` and `built_engines`, so an older commit runs its own code unchanged.
"""

from __future__ import annotations

import asyncio
import json
import sys

from memmesh.bench import turns
from memmesh.common.v1 import scope_pb2
from memmesh.runtime.supervisor import Mesh, built_engines

USER = "paired-bench-user"


def main(data_dir: str) -> None:
    env = {
        "MEMMESH_DATA_DIR": data_dir,
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_INTERNAL_TOKEN": turns.TOKEN,
        "MEMMESH_LOG_LEVEL": "WARNING",
        "MEMMESH_GATEWAY_TENANT_KEYS": json.dumps({turns.TENANT: turns.KEY}),
    }
    mesh = Mesh(built_engines(), env=env)
    mesh.start()
    try:
        scope = scope_pb2.UserScope(tenant_id=turns.TENANT, user_id=USER)
        asyncio.run(turns._seed(mesh.addrs, scope, atoms=10_000, turns=10_000))
        pids = {name: engine.process.pid for name, engine in mesh.running.items()}
        print(json.dumps({"gateway": mesh.addrs["gateway"], "pids": pids}), flush=True)
        sys.stdin.read()
    finally:
        mesh.stop()


if __name__ == "__main__":
    main(sys.argv[1])
