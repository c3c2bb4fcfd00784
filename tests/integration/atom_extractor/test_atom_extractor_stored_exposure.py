"""Stored atoms keep their exposure by name: rows written before the capsule used the shared
Exposure (a StrEnum of names then) still read, and new rows are written in the same form."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from memmesh.engines.atom_extractor.adapters import store_codec
from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import CapsuleCommit
from memmesh.policy.sensitivity import Exposure

# A body exactly as the capsule stored it before; only the exposure varies.
_STORED_BODY = (
    '{"atom_id":"atm_1","category":"constraint","confidence_bp":9000,"confirm_time_us":1767225600000000,'
    '"conflict_atom_id":"","create_time_us":1767225600000000,"critical_tokens":["diabetes"],'
    '"evidence_turn_ids":["turn_1","turn_2"],"exposure":"EXPOSURE","key":"constraint.medical.diabete",'
    '"last_use_time_us":0,"pinned":false,"provenance":"USER_STATED","pull_only":true,"status":"ACTIVE",'
    '"text":"User has diabetes.","topics":["diabetes","health"],"type":"USER_FACT","use_count":2,"version":3}'
)


def stored_body(exposure: Exposure, atom_id: str = "atm_1") -> str:
    return _STORED_BODY.replace('"EXPOSURE"', f'"{exposure.name}"').replace(
        '"atm_1"', f'"{atom_id}"'
    )


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqlCapsuleStore]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = await SqlCapsuleStore.open(url, tmp_path)
    yield opened
    await opened.close()


@pytest.mark.parametrize("exposure", list(Exposure))
def test_a_stored_body_reads_as_the_shared_exposure_and_writes_back_unchanged(
    exposure: Exposure,
) -> None:
    atom = store_codec.atom_of(stored_body(exposure))
    assert atom.exposure is exposure
    assert store_codec.atom_body(atom) == stored_body(exposure)


async def test_rows_stored_before_read_with_their_exposure_and_new_rows_keep_the_form(
    store: SqlCapsuleStore,
) -> None:
    token = uuid.uuid4().hex[:10]
    scope = (f"t-{token}", f"u-{token}")
    ids = {e: f"atm_{e.name.lower()}" for e in Exposure}
    old_rows = [
        (*scope, ids[e], "constraint.medical.diabete", 3, stored_body(e, ids[e])) for e in Exposure
    ]
    async with store.database.write(*scope) as tx:
        await tx.executemany("INSERT INTO capsule_atoms VALUES (?, ?, ?, ?, ?, ?)", old_rows)

    read = {a.atom_id: a.exposure for a in await store.load_atoms(*scope)}
    assert read == {ids[e]: e for e in Exposure}

    fresh = replace(
        store_codec.atom_of(stored_body(Exposure.SAFE_TO_TEXT)), atom_id="atm_new", version=1
    )
    await store.commit(*scope, CapsuleCommit(f"m-{token}", upserts=[(fresh, 0)]))
    async with store.database.read() as tx:
        row = await tx.fetchone(
            "SELECT body FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? AND atom_id = ?",
            (*scope, "atm_new"),
        )
    assert row is not None
    assert str(row[0]) == stored_body(Exposure.SAFE_TO_TEXT, "atm_new").replace(
        '"version":3', '"version":1'
    )
