"""Patterns learned by the capsule's use cases over a real SQLite store, the rules extractor
and fakes of the other engines: created once, updated in place, decayed, proposed, refused,
and forgotten with the observations they stand on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from capsule_fakes import Fakes

from memmesh.engines.atom_extractor.adapters.rules_extractor import DeterministicExtractor
from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    CapsuleCommit,
    ChangeKind,
    Provenance,
    TurnInput,
)
from memmesh.engines.atom_extractor.use_cases import CapsuleService
from memmesh.extraction.model import Command, FactType
from memmesh.extraction.patterns import MICROS_PER_DAY, Observation, ObservationWrite

HOUR = 3_600_000_000
# 2026-01-05 19:00 UTC, a Monday evening.
EVENING = 1_767_639_600_000_000
KEY = "preference.pattern.play_lo-fi"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlCapsuleStore]:
    opened = await SqlCapsuleStore.open("sqlite", tmp_path)
    yield opened
    await opened.close()


def service_of(store: SqlCapsuleStore, fakes: Fakes) -> CapsuleService:
    service: CapsuleService = fakes.service(store, DeterministicExtractor())
    return service


async def say(
    service: CapsuleService, turn_id: str, session: str, text: str, at: int, user: str = "u"
) -> list[tuple[ChangeKind, str]]:
    done = await service.process("t", user, TurnInput(turn_id, session, "user", text), at)
    return [(c.kind, c.reason_code) for c in done.outcome.changes]


async def patterns(store: SqlCapsuleStore, user: str = "u") -> list[AtomRecord]:
    return [a for a in await store.load_atoms("t", user) if a.type is FactType.USER_PATTERN]


async def three_evenings(service: CapsuleService) -> None:
    for day in range(3):
        await say(
            service, f"lofi-{day}", f"s{day}", "play some lo-fi", EVENING + day * MICROS_PER_DAY
        )


async def test_requests_over_three_conversations_create_one_inferred_pattern_atom(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = service_of(store, fakes)
    await say(service, "lofi-0", "s0", "play some lo-fi", EVENING)
    await say(service, "lofi-1", "s1", "can you play some lo-fi music?", EVENING + MICROS_PER_DAY)
    assert await patterns(store) == []
    changes = await say(service, "lofi-2", "s2", "put on some lo-fi", EVENING + 2 * MICROS_PER_DAY)
    assert changes == [(ChangeKind.CREATED, "PATTERN_LEARNED")]
    (atom,) = await patterns(store)
    assert atom.key == KEY and atom.provenance is Provenance.INFERRED
    assert atom.text == "User often asks to play lo-fi in the evening."
    assert atom.confidence_bp == 9000
    assert atom.evidence_turn_ids == ("lofi-0", "lofi-1", "lofi-2")
    assert atom.atom_id in fakes.index.documents
    assert "ATOM_CREATED" in [e.event_type for e in fakes.ledger.events]


async def test_a_re_observed_pattern_is_updated_in_place_not_duplicated(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await three_evenings(service)
    (first,) = await patterns(store)
    changes = await say(service, "lofi-3", "s3", "play lo-fi please", EVENING + 3 * MICROS_PER_DAY)
    assert changes == [(ChangeKind.CONFIRMED, "PATTERN_REOBSERVED")]
    (again,) = await patterns(store)
    assert again.atom_id == first.atom_id and again.version > first.version
    assert again.evidence_turn_ids[-1] == "lofi-3"
    assert again.confirm_time_us == EVENING + 3 * MICROS_PER_DAY
    # A retried turn is a duplicate: its observation is not counted twice.
    await say(service, "lofi-3", "s3", "play lo-fi please", EVENING + 3 * MICROS_PER_DAY)
    assert len([o for o in await store.observations("t", "u") if o.turn_id == "lofi-3"]) == 1


async def test_two_conversations_make_a_logged_proposal_and_no_atom(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    for i, session in enumerate(("s0", "s0", "s1")):
        await say(service, f"lofi-{i}", session, "play some lo-fi", EVENING + i * MICROS_PER_DAY)
    assert await patterns(store) == []
    (proposal,) = [
        r for r in await store.list_rejections("t", "u", 10) if r.reason_code == "pattern_proposal"
    ]
    assert proposal.type is FactType.USER_PATTERN and proposal.confidence_bp == 7500
    assert proposal.threshold_bp == 8000 and proposal.turn_id == "lofi-2"
    assert "support_sessions=2" in proposal.details


async def test_an_unobserved_pattern_decays_then_expires_and_comes_back_when_observed(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await three_evenings(service)
    last = EVENING + 2 * MICROS_PER_DAY
    changes = await say(service, "other-1", "s5", "I play the cello.", last + 15 * MICROS_PER_DAY)
    assert (ChangeKind.MARKED, "PATTERN_DECAYED") in changes
    (decayed,) = await patterns(store)
    assert decayed.confidence_bp == 8000
    changes = await say(service, "other-2", "s6", "hello there", last + 29 * MICROS_PER_DAY)
    assert changes == [(ChangeKind.FORGOTTEN, "PATTERN_EXPIRED")]
    assert await patterns(store) == []
    changes = await say(service, "lofi-9", "s9", "play some lo-fi", last + 30 * MICROS_PER_DAY)
    assert changes == [(ChangeKind.CREATED, "PATTERN_LEARNED")]


async def test_forget_everything_drops_the_observations_and_the_patterns(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await three_evenings(service)
    await say(service, "w-0", "s0", "what's the weather in Lyon?", EVENING)
    assert len(await store.observations("t", "u")) == 4
    await say(service, "bye", "s3", "forget everything", EVENING + 3 * MICROS_PER_DAY)
    assert await store.observations("t", "u") == []
    assert await patterns(store) == []


async def test_forgetting_a_conversation_drops_its_observations_and_weakens_the_pattern(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await three_evenings(service)
    await say(service, "lofi-3", "s3", "play some lo-fi", EVENING + 3 * MICROS_PER_DAY)
    changes = await say(
        service, "end", "s3", "forget this conversation", EVENING + 3 * MICROS_PER_DAY + HOUR
    )
    assert (ChangeKind.MARKED, "PATTERN_EVIDENCE_FORGOTTEN") in changes
    assert {o.session_id for o in await store.observations("t", "u")} == {"s0", "s1", "s2"}
    (atom,) = await patterns(store)
    assert "lofi-3" not in atom.evidence_turn_ids
    # Forget a second conversation: two are left, too few for an applied pattern.
    await service.run_command(
        "t", "u", Command.FORGET_THREAD, "s2", "s2", "r1", EVENING + 4 * MICROS_PER_DAY
    )
    assert await patterns(store) == []
    assert {o.session_id for o in await store.observations("t", "u")} == {"s0", "s1"}


async def test_forget_that_drops_the_observation_of_the_turn_just_said(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await say(service, "w-0", "s0", "what's the weather in Lyon?", EVENING)
    await say(service, "lofi-0", "s0", "play some lo-fi", EVENING + HOUR)
    await say(service, "f", "s0", "forget that", EVENING + 2 * HOUR)
    assert [o.turn_id for o in await store.observations("t", "u")] == ["w-0"]


async def test_forgetting_the_pattern_atom_forgets_its_observations(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await three_evenings(service)
    (atom,) = await patterns(store)
    await service.forget(
        "t", "u", [atom.atom_id], "", "", False, "USER_FORGET", EVENING + 3 * MICROS_PER_DAY
    )
    assert await store.observations("t", "u") == []
    # One more request does not bring it back from what was forgotten.
    await say(service, "lofi-4", "s4", "play some lo-fi", EVENING + 4 * MICROS_PER_DAY)
    assert await patterns(store) == []


async def test_a_do_not_store_rule_refuses_the_pattern_and_its_observation(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = service_of(store, fakes)
    for day in range(2):
        await say(
            service, f"lofi-{day}", f"s{day}", "play some lo-fi", EVENING + day * MICROS_PER_DAY
        )
    fakes.guard.rules.append(("DO_NOT_STORE", "KEY", "preference.pattern"))
    changes = await say(service, "lofi-2", "s2", "play some lo-fi", EVENING + 2 * MICROS_PER_DAY)
    assert changes == []
    assert await patterns(store) == []
    assert [o.turn_id for o in await store.observations("t", "u")] == ["lofi-0", "lofi-1"]


async def test_assistant_turns_and_commands_are_not_observed(store: SqlCapsuleStore) -> None:
    service = service_of(store, Fakes())
    await service.process("t", "u", TurnInput("a1", "s0", "assistant", "play some lo-fi"), EVENING)
    await say(service, "c1", "s0", "don't remember this: play some lo-fi", EVENING + HOUR)
    assert await store.observations("t", "u") == []


async def test_the_store_keeps_a_bounded_number_of_observations_evicting_the_oldest(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await say(service, "seed", "s0", "hello", EVENING)  # a marker so the commit below is new
    added = tuple(
        Observation(f"t{i:02}", "s0", EVENING + i, f"play|band{i}", "play", f"band{i}")
        for i in range(12)
    )
    await store.commit(
        "t", "u", CapsuleCommit(marker="m1", observations=ObservationWrite(added, cap=5))
    )
    kept = await store.observations("t", "u")
    assert [o.turn_id for o in kept] == ["t07", "t08", "t09", "t10", "t11"]
    # Older than the support horizon: evicted.
    await store.commit(
        "t",
        "u",
        CapsuleCommit(marker="m2", observations=ObservationWrite(keep_after_us=EVENING + 10)),
    )
    assert [o.turn_id for o in await store.observations("t", "u")] == ["t10", "t11"]
    # Another user's observations are untouched by either.
    assert await store.observations("t", "other") == []


async def test_a_turn_extracted_late_rolls_no_pattern_back_in_time(
    store: SqlCapsuleStore,
) -> None:
    service = service_of(store, Fakes())
    await three_evenings(service)
    (before,) = await patterns(store)
    changes = await say(service, "late", "s0", "I play the cello.", EVENING + HOUR)
    assert not [c for c in changes if c[1].startswith("PATTERN_")]
    (after,) = await patterns(store)
    assert (after.confidence_bp, after.evidence_turn_ids) == (
        before.confidence_bp,
        before.evidence_turn_ids,
    )
