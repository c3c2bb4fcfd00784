"""One storage contract suite for the capsule, run on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    AtomStatus,
    CapsuleCommit,
    CorrectionPair,
    Effect,
    EffectKind,
    Provenance,
    ProvenanceEntry,
    RejectionEntry,
)
from memmesh.extraction.model import FactType
from memmesh.outbox import EffectQueue
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.errors import VersionMismatch

NOW = 1_767_225_600_000_000


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqlCapsuleStore]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = await SqlCapsuleStore.open(url, tmp_path)
    yield opened
    await opened.close()


@pytest.fixture
def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:10]
    return f"t-{token}", f"u-{token}"


def atom(atom_id: str, key: str, version: int = 1) -> AtomRecord:
    return AtomRecord(
        atom_id,
        key,
        f"User fact {atom_id}.",
        "preference",
        FactType.USER_FACT,
        Provenance.USER_STATED,
        9000,
        Exposure.SAFE_TO_SPEAK,
        False,
        False,
        ("Tea",),
        NOW,
        0,
        0,
        0,
        version,
        ("turn-1",),
        AtomStatus.ACTIVE,
        "",
        ("tea",),
    )


async def test_commit_writes_everything_and_reads_it_back(
    store: SqlCapsuleStore, user: tuple[str, str]
) -> None:
    commit = CapsuleCommit(
        marker="turn:1",
        upserts=[(atom("a2", "k.b"), 0), (atom("a1", "k.a"), 0)],
        corrections=[CorrectionPair("Sarah", "Sandra", "turn-1", NOW)],
        rejections=[
            RejectionEntry(
                "User maybe likes jazz.",
                FactType.USER_FACT,
                6000,
                "confidence_below_threshold",
                8000,
                "",
                "turn-1",
                NOW,
            )
        ],
        provenance=[ProvenanceEntry("turn-1", "p", "m", "v1", "in", "out", 12, 1, False, "", NOW)],
        session_refs=("s1", ("a1",)),
        effects=[Effect(EffectKind.INDEX_UPSERT, {"atom_ids": ["a1", "a2"]})],
    )
    assert await store.commit(*user, commit)
    assert [a.atom_id for a in await store.load_atoms(*user)] == ["a1", "a2"]
    assert (await store.load_atoms(*user))[0] == atom("a1", "k.a")
    assert await store.session_refs(*user, "s1") == ("a1",)
    assert await store.is_processed(*user, "turn:1")
    assert (await store.list_corrections(*user, 10))[0].meant == "Sandra"
    assert (await store.list_rejections(*user, 10))[0].threshold_bp == 8000
    assert (await store.list_provenance(*user, 10))[0].latency_ms == 12
    # The effects are queued in the engine's outbox by the same transaction.
    [queued] = await EffectQueue(store.database).pending(*user)
    assert (queued.kind, queued.lane, queued.key) == ("INDEX_UPSERT", "index", "turn:1#0")
    assert json.loads(queued.payload) == {"atom_ids": ["a1", "a2"]}
    assert await store.atoms_by_id(*user, ["a2", "missing", "a1"]) == await store.load_atoms(*user)


async def test_a_marker_is_written_once(store: SqlCapsuleStore, user: tuple[str, str]) -> None:
    assert await store.commit(
        *user, CapsuleCommit(marker="turn:1", upserts=[(atom("a1", "k.a"), 0)])
    )
    assert not await store.commit(
        *user, CapsuleCommit(marker="turn:1", upserts=[(atom("a2", "k.b"), 0)])
    )
    assert [a.atom_id for a in await store.load_atoms(*user)] == ["a1"]


async def test_a_stale_version_is_refused_and_nothing_is_written(
    store: SqlCapsuleStore, user: tuple[str, str]
) -> None:
    await store.commit(*user, CapsuleCommit(marker="turn:1", upserts=[(atom("a1", "k.a"), 0)]))
    await store.commit(*user, CapsuleCommit(marker="turn:2", upserts=[(atom("a1", "k.a", 2), 1)]))
    with pytest.raises(VersionMismatch):
        await store.commit(
            *user, CapsuleCommit(marker="turn:3", upserts=[(atom("a1", "k.a", 2), 1)])
        )
    assert not await store.is_processed(*user, "turn:3")
    assert (await store.load_atoms(*user))[0].version == 2


async def test_deletes_remove_content_and_pages_follow_key_order(
    store: SqlCapsuleStore, user: tuple[str, str]
) -> None:
    atoms = [atom(f"a{n}", f"k.{chr(ord('e') - n)}") for n in range(5)]
    await store.commit(*user, CapsuleCommit(marker="turn:1", upserts=[(a, 0) for a in atoms]))
    await store.commit(*user, CapsuleCommit(marker="turn:2", deletes=["a0"]))
    first = await store.list_atoms(*user, None, 2)
    rest = await store.list_atoms(*user, (first[-1].key, first[-1].atom_id), 10)
    assert [a.key for a in first + rest] == ["k.a", "k.b", "k.c", "k.d"]


async def test_stores_keep_users_apart(store: SqlCapsuleStore, user: tuple[str, str]) -> None:
    await store.commit(
        *user,
        CapsuleCommit(
            marker="turn:1", upserts=[(atom("a1", "k.a"), 0)], session_refs=("s1", ("a1",))
        ),
    )
    other = (user[0], user[1] + "-other")
    assert await store.load_atoms(*other) == []
    assert await store.session_refs(*other, "s1") == ()
    assert not await store.is_processed(*other, "turn:1")
    assert await store.commit(
        *other, CapsuleCommit(marker="turn:1", upserts=[(replace(atom("a1", "k.a")), 0)])
    )


async def test_effects_queued_before_the_shared_outbox_move_into_it(tmp_path: Path) -> None:
    from memmesh.engines.atom_extractor.adapters.sql_store import ENGINE, migrations_for
    from memmesh.storage.sql import open_database

    first = await open_database(
        "sqlite", ENGINE, lambda dialect: migrations_for(dialect)[:1], tmp_path
    )
    async with first.write("t", "u") as tx:
        await tx.execute(
            "INSERT INTO capsule_effects (tenant_id, user_id, kind, payload) VALUES (?, ?, ?, ?)",
            ("t", "u", "LEDGER_APPEND", '{"events":[]}'),
        )
    await first.close()
    store = await SqlCapsuleStore.open("sqlite", tmp_path)
    try:
        [queued] = await EffectQueue(store.database).pending("t", "u")
        assert (queued.kind, queued.lane, queued.key) == ("LEDGER_APPEND", "ledger", "legacy#1")
        assert json.loads(queued.payload) == {"events": []}
    finally:
        await store.close()


async def test_atoms_stored_before_the_topic_index_are_found_by_topic(tmp_path: Path) -> None:
    from memmesh.engines.atom_extractor.adapters import store_codec
    from memmesh.engines.atom_extractor.adapters.sql_store import ENGINE, migrations_for
    from memmesh.storage.sql import open_database

    older = await open_database(
        "sqlite", ENGINE, lambda dialect: migrations_for(dialect)[:3], tmp_path
    )
    stored = replace(atom("a1", "k.a"), topics=("tea", "k"))
    async with older.write("t", "u") as tx:
        await tx.execute(
            "INSERT INTO capsule_atoms VALUES (?, ?, ?, ?, ?, ?)",
            ("t", "u", "a1", "k.a", 1, store_codec.atom_body(stored)),
        )
    await older.close()
    store = await SqlCapsuleStore.open("sqlite", tmp_path)
    try:
        assert await store.load_related("t", "u", [], [], ["tea"]) == [stored]
        assert await store.load_related("t", "u", [], [], ["coffee"]) == []
    finally:
        await store.close()


async def test_related_atoms_are_read_by_key_id_topic_and_conflict_partner(
    store: SqlCapsuleStore, user: tuple[str, str]
) -> None:
    a1 = replace(atom("a1", "k.a"), topics=("tea",))
    a2 = replace(
        atom("a2", "k.b"), topics=("jazz",), status=AtomStatus.CONFLICT, conflict_atom_id="a3"
    )
    a3 = replace(atom("a3", "k.c"), topics=("blues",))
    a4 = replace(atom("a4", "k.d"), topics=("tea", "rooibos"))
    assert await store.commit(
        *user, CapsuleCommit(marker="turn:1", upserts=[(a, 0) for a in (a1, a2, a3, a4)])
    )
    assert await store.load_related(*user, ["k.b"], [], []) == [a2, a3]
    assert await store.load_related(*user, [], ["a3"], ["tea"]) == [a1, a3, a4]
    assert await store.load_related(*user, [], [], ["rooibos", "none"]) == [a4]
    # A rewritten atom's topics replace its old ones; a deleted atom's go with it.
    a4b = replace(a4, topics=("coffee",), version=2)
    assert await store.commit(
        *user, CapsuleCommit(marker="turn:2", upserts=[(a4b, 1)], deletes=["a1"])
    )
    assert await store.load_related(*user, [], [], ["tea", "rooibos"]) == []
    assert await store.load_related(*user, [], [], ["coffee"]) == [a4b]
    assert await store.load_related(*user, [], [], []) == []
