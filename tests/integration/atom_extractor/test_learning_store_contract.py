"""The learning stores on SQLite and PostgreSQL (real servers): capsules are stored sealed
under a wrapped per-user key and nothing of them reads in clear; a shred removes the key,
the capsule and the user's contributions; packs keep their audit record per version; global
signals count distinct contributors; package versions follow their content."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memmesh.engines.atom_extractor.adapters.learning_store import SqlLearningStore
from memmesh.engines.atom_extractor.learning.envelope import Envelope
from memmesh.engines.atom_extractor.learning.global_signals import Signal
from memmesh.engines.atom_extractor.learning.packages import PackageSigner
from memmesh.engines.atom_extractor.learning.profile import LearningCaps
from memmesh.engines.atom_extractor.learning.service import LearningPolicy, LearningService
from memmesh.engines.atom_extractor.learning.vocabulary_pack import EntryKind, PackEntry
from memmesh.ledger_event import Appended, NewEvent

MASTER = b"learning-store-contract-master-secret"
NOW_US = 1_767_225_600_000_000


class UnusedLedger:
    """These tests record no package events (the acceptance tests read the real Ledger)."""

    async def append(self, tenant_id: str, user_id: str, events: list[NewEvent]) -> list[Appended]:
        raise AssertionError("no ledger event expected here")


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqlLearningStore]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = await SqlLearningStore.open(url, tmp_path)
    yield opened
    await opened.close()


def service_of(store: SqlLearningStore) -> LearningService:
    policy = LearningPolicy(LearningCaps(), 2, frozenset(), b"pseudonym-secret")
    return LearningService(
        store, Envelope(MASTER), PackageSigner(bytes(32)), UnusedLedger(), policy
    )


def new_ids() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


async def rows(store: SqlLearningStore, sql: str, *params: object) -> list[tuple[object, ...]]:
    async with store.database.read() as tx:
        return [tuple(row) for row in await tx.fetchall(sql, params)]


async def test_capsule_is_stored_sealed_and_opens_only_for_its_owner(
    store: SqlLearningStore,
) -> None:
    tenant, user = new_ids()
    service = service_of(store)
    await service.observe_turn(tenant, user, "When I say the loft, I mean Ormsby Gallery.", None)
    stored = await rows(
        store,
        "SELECT c.sealed, k.wrapped_key FROM learning_capsules c JOIN learning_keys k "
        "ON k.tenant_id = c.tenant_id AND k.user_id = c.user_id "
        "WHERE c.tenant_id = ? AND c.user_id = ?",
        tenant,
        user,
    )
    assert len(stored) == 1
    for blob in stored[0]:
        raw = bytes(blob)  # type: ignore[call-overload]
        assert b"Ormsby" not in raw and b"loft" not in raw
    opened = await service.profile(tenant, user)
    assert [(p.said, p.meant) for p in opened.pairs] == [("the loft", "Ormsby Gallery")]
    # Another user's key does not open it: a swapped row fails instead of leaking.
    other = service_of(store)
    with pytest.raises(Exception, match="does not open"):
        await other._open(tenant, f"{user}-x", await store.read_capsule(tenant, user))  # noqa: SLF001


async def test_shred_removes_key_capsule_consent_and_contributions(
    store: SqlLearningStore,
) -> None:
    tenant, user = new_ids()
    service = service_of(store)
    word = uuid.uuid4().hex[:8]
    await service.set_consent(tenant, user, True, NOW_US)
    said = "".join(c for c in word if c.isalpha()) or "zz"
    await service.observe_turn(tenant, user, f"When I say {said}x, I mean yonder.", None)
    assert any(r.signal.heard == f"{said}x" for r in await store.signal_counts(1))
    await service.forget_user(tenant, user)
    for table in ("learning_keys", "learning_capsules", "learning_consent"):
        assert (
            await rows(
                store, f"SELECT 1 FROM {table} WHERE tenant_id = ? AND user_id = ?", tenant, user
            )
            == []
        )
    assert not any(r.signal.heard == f"{said}x" for r in await store.signal_counts(1))
    assert (await service.profile(tenant, user)).empty


async def test_pack_versions_keep_who_when_why_and_an_unchanged_pack_is_not_stored_again(
    store: SqlLearningStore,
) -> None:
    tenant, _ = new_ids()
    service = service_of(store)
    entries = [PackEntry("Quorra", EntryKind.PRODUCT), PackEntry("bay lead", EntryKind.ROLE)]
    first = await service.put_pack(tenant, "op-1", entries, "launch", NOW_US)
    same = await service.put_pack(tenant, "op-2", list(reversed(entries)), "again", NOW_US + 1)
    second = await service.put_pack(tenant, "op-2", entries[:1], "trim", NOW_US + 2)
    assert (first[0], first[2]) == (1, False)
    assert same == (1, first[1], True)  # order does not change the canonical pack
    assert second[0] == 2
    versions = await service.pack_versions(tenant)
    assert [(v.version, v.added_by, v.reason, v.add_time_us) for v in versions] == [
        (2, "op-2", "trim", NOW_US + 2),
        (1, "op-1", "launch", NOW_US),
    ]


async def test_signal_counts_are_distinct_contributors(store: SqlLearningStore) -> None:
    signal = Signal("SLANG", uuid.uuid4().hex, "meant")
    for contributor in ("a", "b", "b"):
        await store.contribute(f"{signal.heard}-{contributor}", [signal])
    (counted,) = [r for r in await store.signal_counts(1) if r.signal == signal]
    assert counted.contributors == 2
    assert [r for r in await store.signal_counts(3) if r.signal == signal] == []


async def test_package_versions_follow_content(store: SqlLearningStore) -> None:
    tenant, user = new_ids()
    assert await store.package_version(tenant, user, "stt:x", "a" * 64) == 1
    assert await store.package_version(tenant, user, "stt:x", "a" * 64) == 1
    assert await store.package_version(tenant, user, "stt:x", "b" * 64) == 2
    assert await store.package_version(tenant, user, "stt:x", "a" * 64) == 3
