"""A restricted atom restricts its evidence turns in the archive, through the outbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from capsule_fakes import Fakes, ScriptedExtractor

from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import EffectKind, TurnInput
from memmesh.engines.atom_extractor.domain.control import MarkFlags
from memmesh.errors import DependencyFailed
from memmesh.extraction.model import (
    ExtractedFact,
    ExtractionResult,
    FactType,
)
from memmesh.policy.sensitivity import Exposure

NOW = 1_767_225_600_000_000
RESIDENCE = ExtractedFact(
    "User lives in Boston.",
    "identity",
    FactType.USER_FACT,
    9000,
    "identity.residence",
    ("Boston",),
    "",
)
DIABETES = ExtractedFact(
    "User has diabetes.",
    "constraint",
    FactType.USER_FACT,
    9000,
    "constraint.medical.diabete",
    (),
    "",
)
SCRIPT = {
    "I live in Boston.": ExtractionResult(relevant=True, facts=(RESIDENCE,)),
    "I really do live in Boston.": ExtractionResult(relevant=True, facts=(RESIDENCE,)),
    "I have diabetes.": ExtractionResult(relevant=True, facts=(DIABETES,)),
}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlCapsuleStore]:
    opened = await SqlCapsuleStore.open("sqlite", tmp_path)
    yield opened
    await opened.close()


def turn(number: int, text: str) -> TurnInput:
    return TurnInput(f"turn-{number}", "session-1", "user", text)


async def test_a_fact_spoken_freely_restricts_nothing(store: SqlCapsuleStore) -> None:
    fakes = Fakes()
    await fakes.service(store, ScriptedExtractor(SCRIPT)).process(
        "t", "u", turn(1, "I live in Boston."), NOW
    )
    assert fakes.threads.restricted == {}


async def test_a_sensitive_fact_restricts_the_turn_it_came_from(store: SqlCapsuleStore) -> None:
    fakes = Fakes()
    await fakes.service(store, ScriptedExtractor(SCRIPT)).process(
        "t", "u", turn(1, "I have diabetes."), NOW
    )
    assert fakes.threads.restricted == {"turn-1": "SAFE_TO_TEXT"}


async def test_marking_an_atom_internal_only_restricts_every_evidence_turn(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = fakes.service(store, ScriptedExtractor(SCRIPT))
    await service.process("t", "u", turn(1, "I live in Boston."), NOW)
    await service.process("t", "u", turn(2, "I really do live in Boston."), NOW + 1)
    outcome = await service.mark(
        "t", "u", "identity.residence", "", MarkFlags(exposure=Exposure.INTERNAL_ONLY), NOW + 2
    )
    assert len(outcome.changes) == 1 and outcome.pending_effects == 0
    assert fakes.threads.restricted == {"turn-1": "INTERNAL_ONLY", "turn-2": "INTERNAL_ONLY"}
    # A later turn that restates the hidden fact is restricted as it becomes evidence.
    await service.process("t", "u", turn(3, "I live in Boston."), NOW + 3)
    assert fakes.threads.restricted["turn-3"] == "INTERNAL_ONLY"


async def test_a_restriction_the_archive_cannot_take_now_stays_queued(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = fakes.service(store, ScriptedExtractor(SCRIPT))
    await service.process("t", "u", turn(1, "I live in Boston."), NOW)

    async def unavailable(*args: object) -> None:
        raise ConnectionError("thread store down")

    working = fakes.threads.restrict_turns
    fakes.threads.restrict_turns = unavailable  # type: ignore[method-assign]
    outcome = await service.mark(
        "t", "u", "identity.residence", "", MarkFlags(exposure=Exposure.INTERNAL_ONLY), NOW + 1
    )
    assert outcome.pending_effects == 1
    assert fakes.outbox is not None
    pending = await fakes.outbox.pending("t", "u")
    assert [effect.kind for effect in pending] == [EffectKind.THREAD_RESTRICT]
    fakes.threads.restrict_turns = working  # type: ignore[method-assign]
    await fakes.drain()
    assert fakes.threads.restricted == {"turn-1": "INTERNAL_ONLY"}
    assert await fakes.outbox.count_pending("t", "u") == 0


@pytest.mark.parametrize(
    ("peer_status", "still_pending"), [("UNAVAILABLE", 1), ("INVALID_ARGUMENT", 0)]
)
async def test_a_restriction_the_archive_refuses_for_good_is_dropped_and_an_outage_keeps_it(
    store: SqlCapsuleStore, peer_status: str, still_pending: int
) -> None:
    fakes = Fakes()
    service = fakes.service(store, ScriptedExtractor(SCRIPT))
    await service.process("t", "u", turn(1, "I live in Boston."), NOW)

    async def failing(*args: object) -> None:
        raise DependencyFailed("thread_store", peer_status)

    fakes.threads.restrict_turns = failing  # type: ignore[method-assign]  # the archive answers with an error
    hidden = MarkFlags(exposure=Exposure.INTERNAL_ONLY)
    outcome = await service.mark("t", "u", "identity.residence", "", hidden, NOW + 1)
    assert outcome.pending_effects == still_pending
    assert fakes.outbox is not None
    dead = await fakes.outbox.dead("t", "u")
    assert [effect.kind for effect in dead] == (
        [] if still_pending else [EffectKind.THREAD_RESTRICT.value]
    )


async def test_a_restriction_refused_for_good_does_not_block_the_next_one(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = fakes.service(store, ScriptedExtractor(SCRIPT))
    working = fakes.threads.restrict_turns

    async def refusing_text_only(
        tenant_id: str, user_id: str, turn_ids: list[str], exposure: str
    ) -> None:
        if exposure == "SAFE_TO_TEXT":
            raise DependencyFailed("thread_store", "INVALID_ARGUMENT")
        await working(tenant_id, user_id, turn_ids, exposure)

    fakes.threads.restrict_turns = refusing_text_only  # type: ignore[method-assign]
    await service.process("t", "u", turn(1, "I live in Boston."), NOW)
    refused = await service.process("t", "u", turn(2, "I have diabetes."), NOW + 1)
    assert refused.outcome.pending_effects == 0
    outcome = await service.mark(
        "t", "u", "identity.residence", "", MarkFlags(exposure=Exposure.INTERNAL_ONLY), NOW + 2
    )
    assert outcome.pending_effects == 0
    assert fakes.threads.restricted == {"turn-1": "INTERNAL_ONLY"}
    assert [effect.kind for effect in await fakes.outbox.dead("t", "u")] == [
        EffectKind.THREAD_RESTRICT.value
    ]
