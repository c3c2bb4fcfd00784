"""The capsule's use cases over a real SQLite store and fakes of the other engines."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from capsule_fakes import Fakes, HeldExtractor, ScriptedExtractor

from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import ChangeKind, TurnInput
from memmesh.engines.atom_extractor.use_cases import CapsuleService
from memmesh.extraction.model import (
    Command,
    Correction,
    ExtractedFact,
    ExtractionResult,
    FactType,
)

NOW = 1_767_225_600_000_000
SISTER = ExtractedFact(
    "User has a sister named Sarah.",
    "relationship",
    FactType.USER_FACT,
    9000,
    "relationship.sister.sarah",
    ("Sarah",),
    "",
)
CELLO = ExtractedFact(
    "User plays the cello.",
    "preference",
    FactType.USER_FACT,
    9000,
    "identity.hobby.cello",
    ("cello",),
    "",
)
SCRIPT = {
    "I have a sister named Sarah.": ExtractionResult(relevant=True, facts=(SISTER,)),
    "I play the cello.": ExtractionResult(relevant=True, facts=(CELLO,)),
    "No, I said Sandra, not Sarah.": ExtractionResult(
        relevant=False,
        command=Command.CORRECTION,
        command_target="Sandra",
        correction=Correction("Sarah", "Sandra"),
    ),
    "Forget that.": ExtractionResult(relevant=False, command=Command.FORGET),
    "Don't remember anything about my sister.": ExtractionResult(
        relevant=False, command=Command.DO_NOT_STORE, command_target="my sister"
    ),
    "Remember everything going forward.": ExtractionResult(
        relevant=False, command=Command.REMEMBER_EVERYTHING
    ),
    "Forget this thread.": ExtractionResult(relevant=False, command=Command.FORGET_THREAD),
    "How is Sarah doing?": ExtractionResult(relevant=False),
}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlCapsuleStore]:
    opened = await SqlCapsuleStore.open("sqlite", tmp_path)
    yield opened
    await opened.close()


def service_with(store: SqlCapsuleStore, fakes: Fakes) -> CapsuleService:
    return fakes.service(store, ScriptedExtractor(SCRIPT))


def turn(number: int, text: str) -> TurnInput:
    return TurnInput(f"turn-{number}", "session-1", "user", text)


async def test_a_retried_turn_is_a_duplicate_and_writes_nothing_twice(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = service_with(store, fakes)
    first = await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    again = await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    assert [c.kind for c in first.outcome.changes] == [ChangeKind.CREATED]
    assert again.outcome.duplicate and again.outcome.changes == ()
    assert [e.event_type for e in fakes.ledger.events] == ["ATOM_CREATED"]
    assert len(fakes.index.documents) == 1


async def test_effects_that_fail_stay_queued_and_the_drainer_delivers_them(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    fakes.ledger.down = fakes.index.down = True
    service = service_with(store, fakes)
    result = await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    assert result.outcome.pending_effects == 2
    assert len(await store.load_atoms("t", "u")) == 1
    fakes.ledger.down = fakes.index.down = False
    await fakes.drain()
    assert fakes.outbox is not None and await fakes.outbox.count_pending("t", "u") == 0
    assert [e.event_type for e in fakes.ledger.events] == ["ATOM_CREATED"]
    assert list(fakes.index.documents.values())[0].text == "User has a sister named Sarah."


async def test_correction_records_the_pair_and_updates_one_atom(store: SqlCapsuleStore) -> None:
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    result = await service.process("t", "u", turn(2, "No, I said Sandra, not Sarah."), NOW + 1)
    assert [c.kind for c in result.outcome.changes] == [ChangeKind.CORRECTED]
    [pair] = await service.list_corrections("t", "u", 10)
    assert (pair.heard, pair.meant, pair.turn_id) == ("Sarah", "Sandra", "turn-2")
    assert [e.event_type for e in fakes.ledger.events][-2:] == [
        "ATOM_CORRECTED",
        "CORRECTION_CAPTURED",
    ]
    assert list(fakes.index.documents.values())[0].text == "User has a sister named Sandra."


async def test_forget_that_removes_the_last_referenced_atom_everywhere(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    result = await service.process("t", "u", turn(2, "Forget that."), NOW + 1)
    assert [c.kind for c in result.outcome.changes] == [ChangeKind.FORGOTTEN]
    assert await store.load_atoms("t", "u") == [] and fakes.index.documents == {}
    forgotten = [e for e in fakes.ledger.events if e.event_type == "ATOM_FORGOTTEN"]
    assert len(forgotten) == 1 and "Sarah" not in repr(forgotten)


async def test_forget_that_sent_while_the_last_turn_is_extracted_forgets_that_turn(
    store: SqlCapsuleStore,
) -> None:
    """A command planned while the turn before it is still being extracted waits for it:
    "that" is the turn just said, not the one before (whose words would be cut instead)."""
    fakes = Fakes()
    extractor = HeldExtractor(SCRIPT, "I have a sister named Sarah.")
    service = fakes.service(store, extractor)
    await service.process("t", "u", turn(1, "I play the cello."), NOW)
    said = asyncio.create_task(
        service.process("t", "u", turn(2, "I have a sister named Sarah."), NOW + 1)
    )
    await extractor.entered.wait()
    command = asyncio.create_task(
        service.run_command("t", "u", Command.FORGET, "", "session-1", "req-1", NOW + 2)
    )
    # Whatever the command can read before the extraction ends, it reads now.
    await asyncio.sleep(0.2)
    extractor.release.set()
    await said
    forgotten = await command
    assert [c.atom.key for c in forgotten.changes] == ["relationship.sister.sarah"]
    assert [a.key for a in await store.load_atoms("t", "u")] == ["identity.hobby.cello"]
    emptied = [turn_ids for turn_ids, terms in fakes.threads.redacted if not terms]
    assert emptied == [("turn-2",)]


def _friend_in_lisbon(n: int) -> ExtractedFact:
    return ExtractedFact(
        f"User's friend Friend{n} lives in Lisbon.",
        "relationship",
        FactType.USER_FACT,
        9000,
        f"relationship.friend.friend{n}",
        (f"Friend{n}", "Lisbon"),
        "",
    )


async def test_a_word_naming_many_atoms_refers_to_none_of_them(store: SqlCapsuleStore) -> None:
    # Nine friends in Lisbon: "Lisbon" names more atoms than one word can refer to, so a turn
    # about Lisbon rewrites none of them (a turn's cost must not grow with the history),
    # while a name that names one atom still records its use.
    friends = {f"My friend Friend{n} lives in Lisbon.": _friend_in_lisbon(n) for n in range(9)}
    script = {
        **SCRIPT,
        **{text: ExtractionResult(relevant=True, facts=(fact,)) for text, fact in friends.items()},
    }
    fakes = Fakes()
    service = fakes.service(store, ScriptedExtractor(script))
    for number, text in enumerate(friends):
        await service.process("t", "u", turn(number, text), NOW)
    before = {a.key: a.use_count for a in await store.load_atoms("t", "u")}
    indexed = len(fakes.index.documents)
    await service.process("t", "u", turn(20, "I miss Lisbon."), NOW + 5)
    assert {a.key: a.use_count for a in await store.load_atoms("t", "u")} == before
    assert len(fakes.index.documents) == indexed
    await service.process("t", "u", turn(21, "How is Friend3 doing?"), NOW + 7)
    after = {a.key: a.use_count for a in await store.load_atoms("t", "u")}
    assert {key: after[key] - before[key] for key in after if after[key] != before[key]} == {
        "relationship.friend.friend3": 1
    }


async def test_a_turn_that_mentions_an_atom_records_its_use(store: SqlCapsuleStore) -> None:
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    await service.process("t", "u", turn(2, "How is Sarah doing?"), NOW + 7)
    [atom] = await store.load_atoms("t", "u")
    assert (atom.use_count, atom.last_use_time_us) == (1, NOW + 7)


async def test_do_not_store_sets_rules_and_later_facts_on_the_topic_are_dropped(
    store: SqlCapsuleStore,
) -> None:
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process("t", "u", turn(1, "Don't remember anything about my sister."), NOW)
    assert ("DO_NOT_STORE", "TOPIC", "sister") in fakes.guard.rules
    result = await service.process("t", "u", turn(2, "I have a sister named Sarah."), NOW + 1)
    assert [(c.kind, c.reason_code) for c in result.outcome.changes] == [
        (ChangeKind.DROPPED, "DO_NOT_STORE_RULE")
    ]
    assert await store.load_atoms("t", "u") == []


async def test_retention_and_thread_commands_reach_their_engines(store: SqlCapsuleStore) -> None:
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process("t", "u", turn(1, "Remember everything going forward."), NOW)
    await service.process("t", "u", turn(2, "Forget this thread."), NOW + 1)
    assert [command for command, _ in fakes.state.applied] == ["REMEMBER_EVERYTHING"]
    # The archive keeps the mode too (richer digests, longer windows).
    assert fakes.threads.retention_modes == [True]
    assert fakes.threads.forgotten == ["session-1"]
    applied = [e for e in fakes.ledger.events if e.event_type == "COMMAND_APPLIED"]
    assert len(applied) == 2


async def test_run_command_is_idempotent_by_request_id(store: SqlCapsuleStore) -> None:
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    first = await service.run_command("t", "u", Command.FORGET, "sister", "", "req-1", NOW + 1)
    again = await service.run_command("t", "u", Command.FORGET, "sister", "", "req-1", NOW + 1)
    assert [c.kind for c in first.changes] == [ChangeKind.FORGOTTEN] and again.duplicate


async def test_users_never_see_each_other(store: SqlCapsuleStore) -> None:
    service = service_with(store, Fakes())
    await service.process("t", "u", turn(1, "I have a sister named Sarah."), NOW)
    assert await service.list_atoms("t", "other", None, 10) == []
    assert await service.list_atoms("other", "u", None, 10) == []


def test_ledger_events_keep_their_form_through_the_outbox_and_older_payloads_still_read() -> None:
    from memmesh.engines.atom_extractor.domain.capsule import Effect, EffectKind
    from memmesh.engines.atom_extractor.outbox import ledger_events, queued_form
    from memmesh.ledger_event import EventTime, NewEvent

    event = NewEvent(
        "k1",
        "ATOM_CREATED",
        "USER_STATED",
        (("at", EventTime(5)), ("n", 3), ("s", "x"), ("y", True)),
        9,
    )
    [queued] = queued_form("turn:1", [Effect(EffectKind.LEDGER_APPEND, {"events": [event]})])
    assert ledger_events(json.loads(queued.payload)["events"]) == [event]
    older = {
        "idempotency_key": "k1",
        "event_type": "ATOM_CREATED",
        "reason_code": "USER_STATED",
        "attributes": [["n", "i", 3], ["s", "s", "x"], ["y", "b", True]],
        "occur_time_us": 9,
    }
    assert ledger_events([older]) == [
        NewEvent("k1", "ATOM_CREATED", "USER_STATED", (("n", 3), ("s", "x"), ("y", True)), 9)
    ]
