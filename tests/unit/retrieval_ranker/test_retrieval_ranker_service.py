"""The ranker's use cases over in-memory ports: read-your-writes, remove, reindex, LRU, other processes."""

from __future__ import annotations

import asyncio

import pytest
from ranker_fakes import (
    ANALYZER,
    TENANT,
    USER,
    MemoryRankerStore,
    atom,
    atom_doc,
    digest,
    digest_doc,
    new_service,
    turn,
    turn_doc,
)

from memmesh.engines.retrieval_ranker.domain.documents import Caps, Kind
from memmesh.engines.retrieval_ranker.mapping import DocumentCodec
from memmesh.engines.retrieval_ranker.ports import StoredDoc
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.runtime.timeconv import timestamp_of

CAPS = Caps(max_atoms=20, max_turns=5, max_digests=5)
QUERIES = ("sister Sarah", "tennis sunday", "what do you remember", "weekend")


def ids(candidates) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.doc.doc_id for c in candidates]


async def test_upsert_is_visible_to_the_next_retrieve() -> None:
    service = new_service()
    assert ids((await service.retrieve(TENANT, USER, "tea", CAPS)).atoms) == []
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User drinks green tea."))])
    assert ids((await service.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a1"]
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User drinks coffee now."))])
    assert ids((await service.retrieve(TENANT, USER, "tea", CAPS)).atoms) == []


async def test_removed_documents_are_never_returned_again() -> None:
    store = MemoryRankerStore()
    service = new_service(store)
    await service.upsert(
        TENANT, USER, [atom_doc(atom("a1", "User likes tea.")), turn_doc(turn("t1", "tea time", 1))]
    )
    assert await service.remove(TENANT, USER, ["a1", "t1", "unknown"]) == 2
    result = await service.retrieve(TENANT, USER, "tea", CAPS)
    assert ids(result.atoms) == ids(result.turns) == []
    fresh = new_service(store)
    assert ids((await fresh.retrieve(TENANT, USER, "tea", CAPS)).atoms) == []


async def test_users_never_see_each_other() -> None:
    service = new_service()
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    assert ids((await service.retrieve(TENANT, "user-2", "tea", CAPS)).atoms) == []
    assert ids((await service.retrieve("tenant-b", USER, "tea", CAPS)).atoms) == []


async def test_a_write_through_another_process_is_seen_by_the_next_read() -> None:
    store = MemoryRankerStore()
    reader, writer = new_service(store), new_service(store)
    await reader.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    assert ids((await reader.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a1"]
    await writer.upsert(TENANT, USER, [atom_doc(atom("a2", "User likes iced tea."))])
    await writer.remove(TENANT, USER, ["a1"])
    assert ids((await reader.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a2"]
    await writer.upsert(TENANT, USER, [atom_doc(atom("a3", "User likes mint tea."))])
    # A rebuild through the writer: the reader loads the rebuilt index instead of replaying changes.
    await writer.reindex(TENANT, USER)
    assert ids((await reader.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a2", "a3"]
    assert await reader.describe(TENANT, USER) == await writer.describe(TENANT, USER)


async def test_reindex_gives_the_same_checksum_and_results_as_incremental_updates() -> None:
    atoms = [
        atom(
            "a1",
            "User's sister is Sarah.",
            key="relationship.sister",
            critical_tokens=["Sarah"],
            create_time=5,
        ),
        atom(
            "a2",
            "User plays tennis on Sundays.",
            key="habit.sport",
            provenance=3,
            confidence_bp=8000,
        ),
    ]
    turns = [turn("t1", "My sister Sarah visits on Sunday", 10), turn("t2", "tennis was fun", 20)]
    digests = [digest("s1", "Weekend", "Sarah visited; tennis.", 30, ["t1", "t2"])]
    docs = (
        [atom_doc(a) for a in atoms]
        + [turn_doc(t) for t in turns]
        + [digest_doc(d) for d in digests]
    )
    store = MemoryRankerStore()
    incremental = new_service(store)
    for doc in reversed(docs):
        await incremental.upsert(TENANT, USER, [doc])
    await incremental.upsert(TENANT, USER, [atom_doc(atom("gone", "User liked tennis once."))])
    await incremental.remove(TENANT, USER, ["gone"])
    live = await incremental.describe(TENANT, USER)
    answers = {q: await incremental.retrieve(TENANT, USER, q, CAPS) for q in QUERIES}
    # Another process (no cached index) rebuilds from the store alone.
    rebuilt = new_service(store)
    summary = await rebuilt.reindex(TENANT, USER)
    assert summary == live
    assert summary.counts == {Kind.ATOM: 2, Kind.TURN: 2, Kind.DIGEST: 1}
    for query in QUERIES:
        assert await rebuilt.retrieve(TENANT, USER, query, CAPS) == answers[query]
        assert await incremental.retrieve(TENANT, USER, query, CAPS) == answers[query]


async def test_reindex_holds_exactly_what_was_pushed_and_not_removed() -> None:
    service = new_service()
    await service.upsert(
        TENANT,
        USER,
        [atom_doc(atom("forgotten", "User likes tea.")), turn_doc(turn("t1", "tea", 1))],
    )
    await service.upsert(TENANT, USER, [atom_doc(atom("kept", "User likes coffee."))])
    await service.remove(TENANT, USER, ["forgotten", "t1"])
    assert (await service.reindex(TENANT, USER)).document_count == 1
    assert ids((await service.retrieve(TENANT, USER, "tea coffee", CAPS)).atoms) == ["kept"]


class FailingReplaceStore(MemoryRankerStore):
    async def replace_all(self, *args: object, **kwargs: object) -> int | None:
        raise RuntimeError("database unavailable")


async def test_reindex_keeps_the_old_index_when_the_rebuild_fails() -> None:
    store = FailingReplaceStore()
    service = new_service(store)
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    before = await service.describe(TENANT, USER)
    with pytest.raises(RuntimeError):
        await service.reindex(TENANT, USER)
    assert await service.describe(TENANT, USER) == before
    assert await new_service(store).describe(TENANT, USER) == before


async def test_reindex_keeps_the_old_index_when_a_stored_document_cannot_be_rebuilt() -> None:
    store = MemoryRankerStore()
    service = new_service(store)
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    await store.upsert(TENANT, USER, [StoredDoc("broken", Kind.ATOM.value, b"\xff\xff")])
    generation, rows = (
        store.users[(TENANT, USER)].generation,
        dict(store.users[(TENANT, USER)].docs),
    )
    with pytest.raises(Exception):  # noqa: B017 (any decoding error)
        await service.reindex(TENANT, USER)
    assert (
        store.users[(TENANT, USER)].generation == generation
        and store.users[(TENANT, USER)].docs == rows
    )


class WriteDuringLoadStore(MemoryRankerStore):
    """A store where another writer lands once, between the rebuild's read and its replace."""

    landed = False

    async def load(self, tenant_id: str, user_id: str):  # type: ignore[no-untyped-def]
        snapshot = await super().load(tenant_id, user_id)
        if not self.landed:
            self.landed = True
            late = atom_doc(atom("late", "User likes green tea."))
            await self.upsert(
                tenant_id, user_id, [StoredDoc("late", late.kind.value, late.payload)]
            )
        return snapshot


async def test_a_write_during_a_rebuild_is_kept() -> None:
    store = WriteDuringLoadStore()
    service = new_service(store)
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    assert (await service.reindex(TENANT, USER)).document_count == 2
    assert ids((await service.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a1", "late"]


async def test_evicted_users_are_reloaded_from_the_store() -> None:
    # One byte: only the index just used stays.
    service = new_service(max_cache_bytes=1)
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    for n in range(3):
        await service.upsert(TENANT, f"other-{n}", [atom_doc(atom("b", "User likes tea."))])
        await service.retrieve(TENANT, f"other-{n}", "tea", CAPS)
    assert ids((await service.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a1"]


async def test_a_food_request_finds_standing_diet_and_allergy_constraints() -> None:
    service = new_service()
    await service.upsert(
        TENANT,
        USER,
        [
            atom_doc(atom("a1", "User does not eat meat.", "constraint.diet.meat")),
            atom_doc(atom("a2", "User is allergic to peanuts.", "constraint.allergy.peanuts")),
            atom_doc(atom("a3", "User has a sister named Sarah.", "relationship.sister.sarah")),
            atom_doc(atom("a4", "User plays the violin.", "identity.hobby.violin")),
        ],
    )
    found = set(
        ids(
            (
                await service.retrieve(
                    TENANT, USER, "what should I cook for my sister tonight?", CAPS
                )
            ).atoms
        )
    )
    assert {"a1", "a2", "a3"} <= found and "a4" not in found
    # A request that names no domain they matter to does not look for their words (without
    # an encoder they are still pushed to it, as standing constraints).
    unrelated = await service.retrieve(TENANT, USER, "what is my sister's middle name?", CAPS)
    assert set(ids(unrelated.atoms)) == {"a3"}
    assert set(ids(unrelated.standing)) == {"a1", "a2"}


def _field(number: int, data: bytes) -> bytes:
    return bytes([number << 3 | 2, len(data)]) + data


async def test_a_digest_stored_in_the_older_form_is_read_and_reindex_stores_it_anew() -> None:
    # id, kind, "title\nsummary\nentity", evidence, time and thread as fields 1, 2, 3, 6, 7, 8.
    legacy = (
        _field(1, b"s1#e1") + bytes([2 << 3, 3]) + _field(3, b"Weekend\nSarah visited.\nSarah")
        + _field(6, b"t1") + _field(7, timestamp_of(30).SerializeToString()) + _field(8, b"s1")
    )  # fmt: skip
    store = MemoryRankerStore()
    await store.upsert(TENANT, USER, [StoredDoc("s1#e1", Kind.DIGEST.value, legacy)])
    service = new_service(store)
    found = (await service.retrieve(TENANT, USER, "sarah weekend", CAPS)).digests
    assert ids(found) == ["s1#e1"]
    rebuilt = digest("s1", "Weekend", "Sarah visited.", 30, ["t1"])
    rebuilt.episode_id, rebuilt.key_entities[:] = "s1#e1", ["Sarah"]
    assert found[0].doc.terms == digest_doc(rebuilt).terms
    await service.reindex(TENANT, USER)
    assert store.users[(TENANT, USER)].docs["s1#e1"][0].payload == digest_doc(rebuilt).payload


class _SlowLoadStore(MemoryRankerStore):
    """A store whose full loads take a while and are counted."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0
        self.release = asyncio.Event()

    async def load(self, tenant_id: str, user_id: str):  # type: ignore[no-untyped-def]
        self.loads += 1
        await self.release.wait()
        return await super().load(tenant_id, user_id)


async def test_a_load_outlives_the_caller_whose_deadline_ended_and_serves_the_next_call() -> None:
    store = _SlowLoadStore()
    writer = new_service(store)
    await writer.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    reader = new_service(store)
    # A turn's deadline ends while the user's large index is still being read.
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.retrieve(TENANT, USER, "tea", CAPS), timeout=0.05)
    second = asyncio.ensure_future(reader.retrieve(TENANT, USER, "tea", CAPS))
    await asyncio.sleep(0.01)
    store.release.set()
    assert ids((await second).atoms) == ["a1"]
    # Both callers shared the one load, and the index is cached for the next turn.
    assert store.loads == 1
    assert ids((await reader.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a1"]
    assert store.loads == 1


async def test_a_new_users_first_writes_are_indexed_in_place_without_reading_the_store_back() -> (
    None
):
    store = _SlowLoadStore()
    store.release.set()
    service = new_service(store)
    await service.upsert(TENANT, USER, [atom_doc(atom("a1", "User likes tea."))])
    await service.upsert(TENANT, USER, [turn_doc(turn("t1", "green tea at noon", 1))])
    result = await service.retrieve(TENANT, USER, "tea", CAPS)
    assert (ids(result.atoms), ids(result.turns)) == (["a1"], ["t1"])
    assert store.loads == 0
    # A user first written before this process started is read from the store once.
    other = new_service(store)
    await other.upsert(TENANT, USER, [atom_doc(atom("a2", "User likes mint tea."))])
    assert ids((await other.retrieve(TENANT, USER, "tea", CAPS)).atoms) == ["a1", "a2"]
    assert store.loads == 1
    assert await other.describe(TENANT, USER) == await new_service(store).describe(TENANT, USER)


class GatedReclaimStore(MemoryRankerStore):
    """A store whose reclaim passes wait for a gate (a slow VACUUM)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.started = 0
        self.finished = 0

    async def reclaim_erased(self) -> bool:
        self.started += 1
        await self.gate.wait()
        self.finished += 1
        return True


async def test_an_erasing_remove_answers_while_a_slow_reclaim_goes_on_and_a_burst_shares_passes() -> (
    None
):
    store = GatedReclaimStore()
    service = RankerService(store, ANALYZER, DocumentCodec(ANALYZER), reclaim_wait_s=0.05)  # type: ignore[arg-type]
    await service.upsert(TENANT, USER, [turn_doc(turn(f"t{n}", "Porto", n)) for n in range(3)])
    for n in range(3):
        assert await service.remove(TENANT, USER, [f"t{n}"], erase=True) == 1
    # Every removal is in force though the first reclaim pass has not finished.
    found = await service.retrieve(TENANT, USER, "Porto", Caps(5, 5, 5))
    assert found.turns == ()
    assert (store.started, store.finished) == (1, 0)
    store.gate.set()
    await service.close()
    # The two erasures during the first pass share one more pass.
    assert (store.started, store.finished) == (2, 2)
