"""Each forget has one plan that reaches every copy the extractor knows of (a real SQLite
store and the real rules; the other engines as recording fakes)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from capsule_fakes import Fakes

from memmesh.engines.atom_extractor.adapters.rules_extractor import DeterministicExtractor
from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import TurnInput
from memmesh.engines.atom_extractor.use_cases import CapsuleService
from memmesh.extraction.model import Command

NOW = 1_767_225_600_000_000
SECOND = 1_000_000
T, U = "t", "u"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlCapsuleStore]:
    opened = await SqlCapsuleStore.open("sqlite", tmp_path)
    yield opened
    await opened.close()


def service_with(store: SqlCapsuleStore, fakes: Fakes) -> CapsuleService:
    return fakes.service(store, DeterministicExtractor())


def said(n: int, text: str, session: str = "s1") -> TurnInput:
    return TurnInput(f"turn-{n}", session, "user", text)


async def keys(service: CapsuleService) -> list[str]:
    return [a.key for a in await service.list_atoms(T, U, None, 100)]


async def test_forget_reaches_evidence_turns_devices_index_and_logs(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "My sister Ana lives in Porto."), NOW)
    await service.process(T, U, said(2, "I live in Lisbon."), NOW + SECOND)
    [sister] = [a for a in await service.list_atoms(T, U, None, 10) if "sister" in a.key]
    assert sister.atom_id in fakes.index.documents

    out = await service.process(
        T, U, said(3, "please forget what I told you about my sister"), NOW + 2 * SECOND
    )

    assert out.command is Command.FORGET
    assert await keys(service) == ["identity.residence"]
    assert sister.atom_id not in fakes.index.documents
    assert ("atom", sister.atom_id) in fakes.devices.forgotten
    [(turn_ids, terms)] = fakes.threads.redacted
    # Every turn the extractor saw: the ThreadStore cuts only the sentences holding a term.
    assert set(turn_ids) == {"turn-1", "turn-2", "turn-3"}
    assert "Ana" in terms and "sister" in terms
    assert "Lisbon" not in terms
    assert (await fakes.outbox.count_pending(T, U)) == 0


async def test_a_late_extraction_of_an_older_turn_never_brings_the_fact_back(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "My sister Ana lives in Porto."), NOW)
    await service.process(T, U, said(3, "forget about my sister"), NOW + 3 * SECOND)
    # Turn 2 was said before the forget, and its extraction arrives after it.
    late = await service.process(T, U, said(2, "My sister Ana is a nurse."), NOW + SECOND)
    assert late.facts == ()
    assert await keys(service) == []
    # Its archived copy loses what the forget named.
    [(turn_ids, terms)] = [r for r in fakes.threads.redacted if r[0] == ("turn-2",)]
    assert "Ana" in terms and "sister" in terms
    # Said again after the forget, it is remembered again: the user told it anew.
    await service.process(T, U, said(4, "My sister Ana is a nurse."), NOW + 4 * SECOND)
    assert await keys(service) == ["relationship.sister.ana"]


async def test_a_redacted_evidence_turn_is_never_extracted_again(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "My brother Kwame is a pilot."), NOW)
    await service.process(T, U, said(2, "forget that"), NOW + SECOND)
    assert await keys(service) == []
    # The evidence turn comes round again (a second delivery of its extraction) at a later now.
    again = await service.process(T, U, said(1, "My brother Kwame is a pilot."), NOW + 5 * SECOND)
    assert again.outcome.duplicate or again.facts == ()
    assert await keys(service) == []


async def test_do_not_store_empties_its_own_turn_and_keeps_nothing_from_it(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    out = await service.process(T, U, said(1, "off the record, my cousin Petra is in rehab"), NOW)
    assert out.command is Command.DO_NOT_STORE
    assert out.facts == () and out.rejections == ()
    assert await keys(service) == []
    assert (("turn-1",), ()) in fakes.threads.redacted
    assert await service.list_rejections(T, U, 10) == []
    assert await service.list_provenance(T, U, 10) == []


async def test_forget_this_conversation_forgets_the_atoms_only_it_evidenced(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "I live in Lisbon.", "s0"), NOW)
    await service.process(T, U, said(2, "My brother Kwame is a pilot.", "s1"), NOW + SECOND)
    await service.process(T, U, said(3, "I live in Lisbon.", "s1"), NOW + 2 * SECOND)
    out = await service.process(
        T, U, said(4, "can we scrap this whole conversation", "s1"), NOW + 3 * SECOND
    )
    assert out.command is Command.FORGET_THREAD
    # Kwame was said only here; Lisbon was said in an earlier conversation too.
    assert await keys(service) == ["identity.residence"]
    assert fakes.threads.forgotten == ["s1"]
    # A late extraction of a turn of the forgotten conversation adds nothing ...
    late = await service.process(T, U, said(5, "I'm allergic to walnuts.", "s1"), NOW + SECOND)
    assert late.facts == ()
    assert (("turn-5",), ()) in fakes.threads.redacted
    # ... while the same conversation id going on after the forget is heard.
    await service.process(T, U, said(6, "I'm allergic to walnuts.", "s1"), NOW + 9 * SECOND)
    assert "constraint.allergy.walnut" in await keys(service)


async def test_forget_everything_reaches_every_engine_and_drops_queued_effects(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "My brother Kwame is a pilot."), NOW)
    fakes.index.down = True
    await service.process(T, U, said(2, "I live in Lisbon."), NOW + SECOND)
    assert (await fakes.outbox.count_pending(T, U)) > 0  # the index upsert waits
    out = await service.process(
        T, U, said(3, "please forget everything you know about me"), NOW + 2 * SECOND
    )
    assert out.command is Command.FORGET_EVERYTHING
    assert await keys(service) == []
    assert fakes.threads.forgotten_users == [U]
    assert fakes.devices.forgotten_users == [U]
    assert fakes.guard.forgotten_users == [U]
    assert fakes.keys.shredded == [U]
    fakes.index.down = False
    await fakes.drain()
    assert fakes.index.documents == {}
    assert (await fakes.outbox.count_pending(T, U)) == 0
    assert await service.list_rejections(T, U, 10) == []
    # A turn said before the forget and extracted after it adds nothing.
    late = await service.process(T, U, said(4, "I'm allergic to walnuts."), NOW + SECOND)
    assert late.facts == ()
    assert await keys(service) == []


async def test_run_command_forget_everything_and_thread(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "My brother Kwame is a pilot.", "s1"), NOW)
    await service.run_command(T, U, Command.FORGET_THREAD, "", "s1", "r1", NOW + SECOND)
    assert await keys(service) == []
    assert fakes.threads.forgotten == ["s1"]
    await service.process(T, U, said(2, "I live in Lisbon.", "s2"), NOW + 2 * SECOND)
    await service.run_command(T, U, Command.FORGET_EVERYTHING, "", "s2", "r2", NOW + 3 * SECOND)
    assert await keys(service) == []
    assert fakes.devices.forgotten_users == [U]


async def test_off_the_record_with_content_covers_that_turn_not_the_one_before(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "I play the cello."), NOW)
    await service.process(T, U, said(2, "off the record, my cousin Petra is in rehab"), NOW + 1)
    [kept] = await keys(service)
    assert "hobby" in kept
    # Said on its own, it covers what was just said.
    await service.process(T, U, said(3, "don't remember that"), NOW + 2)
    assert await keys(service) == []


async def test_forget_by_id_reaches_the_evidence_turns_and_devices(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "My brother Kwame is a pilot."), NOW)
    [brother] = await service.list_atoms(T, U, None, 10)
    await service.forget(T, U, [brother.atom_id], "", "", False, "USER_FORGET", NOW + SECOND)
    assert await keys(service) == []
    assert ("atom", brother.atom_id) in fakes.devices.forgotten
    [(turn_ids, terms)] = fakes.threads.redacted
    assert turn_ids == ("turn-1",) and "Kwame" in terms


async def test_forget_about_someone_reaches_what_was_said_of_them_without_a_fact(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "My aunt is Zoë.", "s0"), NOW)
    # Nothing is extracted from these: the forget still reaches them by the subject's words.
    await service.process(T, U, said(2, "My aunt's address is 12 Elmwood Road."), NOW + SECOND)
    await service.process(T, U, said(3, "I bought Zoë a scarf."), NOW + 2 * SECOND)
    await service.process(T, U, said(4, "Actually, forget about my aunt."), NOW + 3 * SECOND)
    assert await keys(service) == []
    reached = {t for turn_ids, terms in fakes.threads.redacted for t in turn_ids if terms}
    assert {"turn-1", "turn-2", "turn-3"} <= reached
    [terms] = {terms for _, terms in fakes.threads.redacted if terms}
    assert "Zoë" in terms and "aunt" in terms


@pytest.mark.parametrize(
    "fact",
    [
        "I'm visiting my aunt Xuqtikebee in Xuqparu next month.",
        "By the way, my niece's name is Müller and she's from Bonn.",
        # Nothing the extractor keeps: "that" is still this turn.
        "My therapist's address is 3 Elmwood Road.",
    ],
)
@pytest.mark.parametrize("spoken", [True, False])
async def test_forget_that_takes_the_turn_just_said_whole(store, fact, spoken):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.process(T, U, said(1, "I like long walks.", "s1"), NOW)
    await service.process(T, U, said(2, fact, "s1"), NOW + SECOND)
    if spoken:
        out = await service.process(T, U, said(3, "Please delete that.", "s1"), NOW + 2 * SECOND)
        assert out.command is Command.FORGET
    else:
        await service.run_command(T, U, Command.FORGET, "", "s1", "r-1", NOW + 2 * SECOND)
    assert (("turn-2",), ()) in fakes.threads.redacted
    # What was said before it, and in another conversation, is not taken whole.
    assert not any("turn-1" in ids and not terms for ids, terms in fakes.threads.redacted)
    assert [k for k in await keys(service) if "aunt" in k or "niece" in k] == []


@pytest.mark.parametrize(
    "target, text, secret",
    [
        ("password", "My wifi password is xuqab12.", "xuqab12"),
        ("PIN", "The alarm PIN is 4821.", "4821"),
        ("passwords", "Here's the password for the router: hunter22.", "hunter22"),
        ("bank details", "My bank details are sort code 40-11-62.", "40-11-62"),
    ],
)
async def test_do_not_store_by_command_refuses_every_later_turn_on_its_subject(
    store, target, text, secret
):
    fakes = Fakes()
    service = service_with(store, fakes)
    await service.run_command(T, U, Command.DO_NOT_STORE, target, "s1", "r-1", NOW)
    out = await service.process(
        T, U, said(1, f"{text} My sister Ana lives in Porto."), NOW + SECOND
    )
    # Nothing is kept from the turn, and its sentences on the subject leave the archive.
    assert out.facts == () and await keys(service) == []
    [(turn_ids, terms)] = [r for r in fakes.threads.redacted if r[0] == ("turn-1",)]
    assert terms and all(t.casefold() not in "my sister ana lives in porto." for t in terms)
    assert await service.list_rejections(T, U, 10) == []
    # A turn on another subject is kept as ever.
    await service.process(T, U, said(2, "My brother Kwame is a pilot."), NOW + 2 * SECOND)
    assert await keys(service) == ["relationship.brother.kwame"]
    assert not [r for r in fakes.threads.redacted if r[0] == ("turn-2",)]
    assert secret not in " ".join(t for _, terms in fakes.threads.redacted for t in terms)


async def test_a_forget_reaches_evidence_turns_older_than_the_atom_keeps(store):
    fakes = Fakes()
    service = service_with(store, fakes)
    for n in range(1, 12):  # the atom keeps the ids of its latest 8 evidence turns only
        await service.process(T, U, said(n, "My sister Ana lives in Porto."), NOW + n * SECOND)
    await service.process(T, U, said(20, "forget about my sister"), NOW + 30 * SECOND)
    reached = {t for turn_ids, terms in fakes.threads.redacted if "Ana" in terms for t in turn_ids}
    assert {f"turn-{n}" for n in range(1, 12)} <= reached


class RecordingExtractor(DeterministicExtractor):
    """The rules, recording every text handed to the turn extractor (a provider would get)."""

    def __init__(self) -> None:
        super().__init__(forget_cached=self._drop_cache)
        self.seen: list[str] = []
        self.caches_dropped = 0

    def _drop_cache(self) -> None:
        self.caches_dropped += 1

    async def extract(self, tenant_id, user_id, turn, now_us):
        self.seen.append(turn.text)
        return await super().extract(tenant_id, user_id, turn, now_us)


async def test_a_turn_on_a_do_not_store_subject_never_reaches_the_turn_extractor(store):
    fakes = Fakes()
    extractor = RecordingExtractor()
    service = fakes.service(store, extractor)
    await service.run_command(T, U, Command.DO_NOT_STORE, "password", "s1", "r-1", NOW)
    await service.process(T, U, said(1, "My wifi password is xuqab12."), NOW + SECOND)
    await service.process(T, U, said(2, "My brother Kwame is a pilot."), NOW + 2 * SECOND)
    assert extractor.seen == ["My brother Kwame is a pilot."]


async def test_an_erasure_drops_what_the_turn_extractor_keeps_and_a_plain_turn_does_not(store):
    # The embedded extractor's encoder keeps vectors of the clauses it embedded: a forget
    # must not leave vectors of the forgotten words in the process.
    fakes = Fakes()
    extractor = RecordingExtractor()
    service = fakes.service(store, extractor)
    await service.process(T, U, said(1, "My sister Ana lives in Porto."), NOW)
    assert extractor.caches_dropped == 0
    await service.process(
        T, U, said(2, "please forget what I told you about my sister"), NOW + SECOND
    )
    assert extractor.caches_dropped == 1
    await service.run_command(T, U, Command.FORGET_EVERYTHING, "", "s1", "r-1", NOW + 2 * SECOND)
    assert extractor.caches_dropped == 2
