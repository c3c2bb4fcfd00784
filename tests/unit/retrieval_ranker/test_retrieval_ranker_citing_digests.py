"""A digest that cites a turn found comes with it, though its own summary does not match."""

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
from memmesh.engines.retrieval_ranker.domain.user_index import CITE_BYTES, UserIndex

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


async def test_the_digest_citing_a_turn_found_follows_the_digests_found() -> None:
    service = new_service()
    await service.upsert(TENANT, USER, history())
    result = await service.retrieve(TENANT, USER, "kayak trip", CAPS)
    assert ids(result.turns) == ["t1"]
    assert ids(result.digests) == ["e-kayak", "e-summer"]
    cited = result.digests[-1]
    assert (cited.relevance_micros, cited.tier) == (0, 3)


async def test_within_the_cap_a_digest_citing_no_turn_found_leaves_first() -> None:
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
    # Three found by their words; the citing one they did not bring takes the place of the
    # least relevant of those citing no turn found, and the digest citing t1 stays.
    assert len(found.digests) == CAPS.max_digests
    assert "e-summer" in ids(found.digests) and "e-trip" in ids(found.digests)
    assert ids(found.digests)[-1] == "e-summer"


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
