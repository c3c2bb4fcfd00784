"""Correction pairs at rest (seed 001 §2.4.1: the capsule is encrypted at rest): a pair is
stored sealed with the user's learning data key, a pair an earlier version stored in clear
is sealed when the store opens, and once the key is shredded no pair can be read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memmesh.engines.atom_extractor.adapters.learning_store import SqlLearningStore
from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import (
    CapsuleCommit,
    CorrectionPair,
    LocalErasure,
)
from memmesh.engines.atom_extractor.learning.envelope import Envelope
from memmesh.engines.atom_extractor.learning.keys import CapsuleKeys

NOW = 1_767_225_600_000_000
USER = ("t1", "u1")


def rows(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path / "atom_extractor.sqlite3")
    try:
        return list(db.execute("SELECT heard, meant, sealed FROM capsule_corrections"))
    finally:
        db.close()


async def test_pairs_are_sealed_older_clear_ones_resealed_and_shredding_loses_them(
    tmp_path: Path,
) -> None:
    learning = await SqlLearningStore.open("sqlite", tmp_path)
    keys = CapsuleKeys(learning, Envelope(b"0123456789abcdef-master"))
    store = await SqlCapsuleStore.open("sqlite", tmp_path, keys)
    commit = CapsuleCommit(
        marker="turn:t-1", corrections=[CorrectionPair("Sarah", "Sandra", "t-1", NOW)]
    )
    assert await store.commit(*USER, commit)
    [(heard, meant, sealed)] = rows(tmp_path)
    assert (heard, meant) == ("", "") and b"Sandra" not in bytes(sealed)  # type: ignore[arg-type]
    await store.close()

    # A pair an earlier version stored in clear.
    db = sqlite3.connect(tmp_path / "atom_extractor.sqlite3")
    db.execute(
        "INSERT INTO capsule_corrections (tenant_id, user_id, turn_id, heard, meant, "
        "record_time_us) VALUES (?, ?, 't-0', 'Jon', 'John', ?)",
        (*USER, NOW - 1),
    )
    db.commit()
    db.close()
    store = await SqlCapsuleStore.open("sqlite", tmp_path, keys)
    assert all(h == "" and m == "" and s is not None for h, m, s in rows(tmp_path))
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("atom_extractor.sqlite3*"))
    assert b"John" not in raw and b"Sandra" not in raw
    pairs = await store.list_corrections(*USER, 10)
    assert [(p.heard, p.meant, p.turn_id) for p in pairs] == [
        ("Sarah", "Sandra", "t-1"),
        ("Jon", "John", "t-0"),
    ]
    # Forget by words reads the sealed pairs.
    forget = CapsuleCommit(marker="forget:1", erasure=LocalErasure(terms=("john",)))
    assert await store.commit(*USER, forget)
    assert [p.meant for p in await store.list_corrections(*USER, 10)] == ["Sandra"]

    await learning.shred(*USER, "contributor")
    assert await store.list_corrections(*USER, 10) == []
    await store.close()
    await learning.close()
