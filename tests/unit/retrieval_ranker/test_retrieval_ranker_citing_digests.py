"""A digest that cites turns found comes with them, though its own summary does not match,
ranked by its own rank and theirs."""

from __future__ import annotations

from dataclasses import replace

from ranker_fakes import (
    TENANT,
    USER,
    MemoryRankerStore,
    digest,
    digest_doc,
    new_service,
    turn,
    turn_doc,
)

from memmesh.engines.retrieval_ranker.domain.documents import Caps
from memmesh.engines.retrieval_ranker.domain.user_index import CITE_BYTES, CITING_TIER, UserIndex

CAPS = Caps(max_atoms=20, max_turns=5, max_digests=3)


def ids(candidates) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.doc.doc_id for c in candidates]


def history() -> list:  # type: ignore[type-arg]
    return [
        turn_doc(turn("t1", "we finally booked the kayak trip", 10)),
        turn_doc(turn("t2", "the dentist moved my appointment", 20)),
        digest_doc(digest("e-summer", "Summer plans", "Talked about holidays.", 30, ["t1"])),
        digest_doc(digest("e-health", "Check-ups", "Appointments.", 40, ["t2"])),
        digest_doc(digest("e-kayak", "Kayak club", "The kayak club meets Fridays.", 50)),
    ]


async def test_the_digest_citing_a_turn_found_comes_with_the_turns_rank() -> None:
    service = new_service()
    await service.upsert(TENANT, USER, history())
    result = await service.retrieve(TENANT, USER, "kayak trip", CAPS)
    assert ids(result.turns) == ["t1"]
    # e-kayak is the first digest by its words, e-summer cites the first turn: equal scores,
    # the newer first.
    assert ids(result.digests) == ["e-kayak", "e-summer"]
    cited = result.digests[-1]
    assert (cited.relevance_micros, cited.tier) == (1_000_000, CITING_TIER)


async def test_a_digest_quoting_several_turns_found_comes_before_one_found_by_its_words() -> None:
    service = new_service()
    await service.upsert(
        TENANT,
        USER,
        [
            *history(),
            turn_doc(turn("t3", "the kayak trip needs new paddles", 25)),
            digest_doc(digest("e-many", "Outdoors", "Water sports talk.", 20, ["t1", "t3"])),
        ],
    )
    result = await service.retrieve(TENANT, USER, "kayak trip", CAPS)
    assert set(ids(result.turns)) == {"t1", "t3"}
    assert ids(result.digests)[0] == "e-many"
    assert result.digests[0].relevance_micros == 1_000_000 + 61_000_000 // 62


async def test_within_the_cap_the_lowest_scores_leave() -> None:
    service = new_service()
    await service.upsert(
        TENANT,
        USER,
        [
            *history(),
            digest_doc(digest("e-kayak-2", "Kayak repairs", "A kayak paddle broke.", 60)),
            digest_doc(digest("e-trip", "The trip", "A kayak trip, booked.", 70, ["t1"])),
        ],
    )
    found = await service.retrieve(TENANT, USER, "kayak trip", CAPS)
    assert len(found.digests) == CAPS.max_digests
    # e-trip is found by its words and cites the turn found: first. e-summer cites it too.
    assert ids(found.digests)[:2] == ["e-trip", "e-summer"]
    scores = [d.relevance_micros for d in found.digests]
    assert scores == sorted(scores, reverse=True)


async def test_a_replaced_or_removed_digest_is_no_longer_brought_by_the_turn() -> None:
    store = MemoryRankerStore()
    service = new_service(store)
    await service.upsert(TENANT, USER, history())
    await service.upsert(
        TENANT, USER, [digest_doc(digest("e-summer", "Summer plans", "Holidays.", 31, ["t2"]))]
    )
    assert ids((await service.retrieve(TENANT, USER, "kayak trip", CAPS)).digests) == ["e-kayak"]
    assert ids((await service.retrieve(TENANT, USER, "dentist", CAPS)).digests) == [
        "e-health",
        "e-summer",
    ]
    await service.remove(TENANT, USER, ["e-health"])
    assert ids((await service.retrieve(TENANT, USER, "dentist", CAPS)).digests) == ["e-summer"]
    # Another process reads the index from the store: the same citations.
    fresh = new_service(store)
    for query in ("kayak trip", "dentist"):
        assert await fresh.retrieve(TENANT, USER, query, CAPS) == await service.retrieve(
            TENANT, USER, query, CAPS
        )


async def test_a_generic_query_brings_no_digest_by_citation() -> None:
    service = new_service()
    await service.upsert(TENANT, USER, history())
    result = await service.retrieve(TENANT, USER, "what do you remember", CAPS)
    assert ids(result.turns) == []
    # Newest first, the generic rule alone.
    assert ids(result.digests) == ["e-kayak", "e-health", "e-summer"]


def test_citations_are_counted_in_the_index_bytes_and_freed_with_the_digest() -> None:
    index = UserIndex(docs=history()[:2])
    before = index.approximate_bytes()
    cited = digest_doc(digest("e-both", "Both", "Kayak and dentist.", 60, ["t1", "t2"]))
    uncited = replace(cited, cites=())
    index.upsert(uncited)
    without = index.approximate_bytes()
    index.upsert(cited)
    assert index.approximate_bytes() - without == 2 * CITE_BYTES
    index.remove("e-both")
    assert index.approximate_bytes() == before
