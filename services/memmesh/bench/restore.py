"""Restore of 10k atoms end to end through real Ledger and OutboxSync processes
(`python -m memmesh.bench restore`); seed 001 Q15 targets: restore
within 10 s, restore set within 32 MB."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

from memmesh.common.v1 import memory_pb2
from memmesh.device import ContinuityRecord, DeviceSync, RecordKind, new_key
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as pb_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of

TOKEN = "bench-token"
NOW_US = 1_767_225_600_000_000
RESTORE_TARGET_S = 10.0
RESTORE_SET_CAP_BYTES = 32 * 1024 * 1024


def _atom(n: int) -> ContinuityRecord:
    atom = memory_pb2.Atom(
        atom_id=f"atom-{n:05d}",
        key=f"preference.topic_{n % 997}.detail_{n}",
        text=f"The user prefers option {n % 13} for topic {n % 997}, stated in session {n // 40}.",
        category=memory_pb2.ATOM_CATEGORY_PREFERENCE,
        provenance=memory_pb2.PROVENANCE_USER_STATED,
        confidence_bp=7000 + n % 3000,
        pinned=n % 50 == 0,
        critical_tokens=[f"Token{n % 31}"],
        create_time=timestamp_of(NOW_US - n * 1_000_000),
        use_count=n % 17,
        version=1,
        evidence_turn_ids=[f"turn-{n:06d}"],
    )
    return ContinuityRecord(
        RecordKind.ATOM, atom.atom_id, 1, atom.SerializeToString(deterministic=True)
    )


async def _run(addr: str, workdir: Path, atoms: int) -> dict[str, float | int]:
    token = uuid.uuid4().hex[:10]
    tenant, user, cloud_key = f"bench-{token}", f"u-{token}", new_key()
    phone = DeviceSync.open(workdir / "phone.sqlite3", tenant, user, "phone", new_key(), cloud_key)
    tablet = DeviceSync.open(
        workdir / "tablet.sqlite3", tenant, user, "tablet", new_key(), cloud_key
    )
    async with engine_channel(addr, TOKEN, default_timeout_s=30.0) as channel:
        stub = pb_grpc.OutboxSyncServiceStub(channel)
        started = time.perf_counter()
        for n in range(atoms):
            phone.save(_atom(n), NOW_US)
        saved = time.perf_counter()
        flushed = await phone.flush(stub, NOW_US)
        pushed = time.perf_counter()
        report = await tablet.restore(stub, NOW_US)
        restored = time.perf_counter()
    if (
        flushed.remaining
        or len(tablet.vault.records()) != atoms
        or tablet.vault.listing() != phone.vault.listing()
    ):
        raise RuntimeError("restore did not reproduce the pushed continuity set")
    return {
        "atoms": atoms,
        "save_s": round(saved - started, 3),
        "push_s": round(pushed - saved, 3),
        "restore_s": round(restored - pushed, 3),
        "end_to_end_s": round(restored - started, 3),
        "restore_pages": report.pages,
        "restore_set_bytes": report.restore_set_bytes,
        "largest_page_bytes": report.largest_page_bytes,
    }


def bench_restore(atoms: int = 10_000, storage_url: str = "sqlite") -> dict[str, float | int]:
    """Push `atoms` atoms from one device, restore them into a fresh vault; elapsed seconds and bytes."""
    with tempfile.TemporaryDirectory(prefix="memmesh-bench-restore-") as workdir:
        env = {
            "MEMMESH_DATA_DIR": workdir,
            "MEMMESH_STORAGE_URL": storage_url,
            "MEMMESH_INTERNAL_TOKEN": TOKEN,
        }
        with Mesh(["ledger", "outbox_sync"], env=env) as mesh:
            figures = asyncio.run(_run(mesh.addrs["outbox_sync"], Path(workdir), atoms))
    figures["restore_within_target"] = int(figures["restore_s"] <= RESTORE_TARGET_S)
    figures["restore_set_within_cap"] = int(figures["restore_set_bytes"] <= RESTORE_SET_CAP_BYTES)
    return figures


if __name__ == "__main__":
    print(
        json.dumps(
            bench_restore(storage_url=sys.argv[1] if len(sys.argv) > 1 else "sqlite"),
            sort_keys=True,
        )
    )
