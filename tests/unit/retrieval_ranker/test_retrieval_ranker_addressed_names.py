"""The names the user's conversations address someone by say who talks, not what about: a
question naming them is scored by its other words."""

from __future__ import annotations

from ranker_fakes import ANALYZER, TENANT, USER, MemoryRankerStore, new_service, turn, turn_doc

from memmesh.engines.retrieval_ranker.domain.documents import Caps
from memmesh.engines.retrieval_ranker.domain.user_index import (
    ADDRESS_BYTES,
    MIN_ADDRESSED_TURNS,
    UserIndex,
)

CAPS = Caps(max_atoms=20, max_turns=5, max_digests=3)


def conversation() -> list:  # type: ignore[type-arg]
    return [
        turn_doc(turn("t1", "Thanks, Melanie! That means a lot.", 10)),
        turn_doc(turn("t2", "Wow, Melanie, the view looks great.", 20)),
        turn_doc(turn("t3", "Hey Melanie! Long time no talk.", 30)),
        turn_doc(turn("t4", "Glad you liked it, Mel.", 40)),
        turn_doc(turn("t5", "I signed up for a pottery class yesterday.", 50)),
        turn_doc(turn("t6", "We moved here from my home country, Sweden.", 60)),
    ]


def ids(candidates) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.doc.doc_id for c in candidates]


def test_names_in_address_position_are_found_and_sentence_openers_are_not() -> None:
    assert ANALYZER.addressed("Thanks, Mel! Hey Jon, look at this.") == ("jon", "mel")
    assert ANALYZER.addressed("Wow, that is great. Yes, I will. Paris is lovely.") == ()
    assert ANALYZER.addressed("My home country, Sweden.") == ("sweden",)


def test_a_name_addressed_in_enough_turns_is_an_addressee_and_leaves_with_them() -> None:
    index = UserIndex(docs=conversation())
    # Melanie in three turns, Mel in one, Sweden once: only Melanie is whom they talk with.
    assert MIN_ADDRESSED_TURNS == 3
    assert index.addressee_names() == {"melani"}
    before = index.approximate_bytes()
    index.remove("t1")
    assert index.addressee_names() == frozenset()
    assert before - index.approximate_bytes() >= ADDRESS_BYTES


async def test_a_question_naming_the_addressee_is_scored_by_its_other_words() -> None:
    service = new_service()
    await service.upsert(TENANT, USER, conversation())
    # "melanie" alone found the turns that address her; "pottery" finds what was said.
    result = await service.retrieve(TENANT, USER, "What about Melanie and pottery?", CAPS)
    assert ids(result.turns) == ["t5"]
    # A name addressed in fewer turns is still a word to find.
    assert ids((await service.retrieve(TENANT, USER, "Sweden", CAPS)).turns) == ["t6"]


async def test_a_question_with_nothing_but_the_name_keeps_it() -> None:
    service = new_service()
    await service.upsert(TENANT, USER, conversation())
    result = await service.retrieve(TENANT, USER, "Melanie?", CAPS)
    assert set(ids(result.turns)) == {"t1", "t2", "t3"}


async def test_another_process_reads_the_same_addressees_from_the_store() -> None:
    store = MemoryRankerStore()
    service = new_service(store)
    await service.upsert(TENANT, USER, conversation())
    query = "What about Melanie and pottery?"
    assert await new_service(store).retrieve(TENANT, USER, query, CAPS) == await service.retrieve(
        TENANT, USER, query, CAPS
    )
