"""What a closed session sends to the retrieval index: a digest with something to find is
upserted; one with nothing (a Brief-only session, a session of text-only turns) is removed
instead, so it never takes a bundle's place."""

from __future__ import annotations

from memmesh.engines.thread_store.adapters.ranker_index import (
    INDEX_REMOVE,
    INDEX_UPSERT,
    index_effects,
)
from memmesh.engines.thread_store.domain.model import Episode, Role, Turn
from memmesh.engines.thread_store.domain.summary import build_digest
from memmesh.engines.thread_store.ports import IndexChange
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb


def _sent(change: IndexChange) -> tuple[list[str], list[str]]:
    """The ids removed and the digest ids upserted by the change's effects."""
    removed: list[str] = []
    upserted: list[str] = []
    for effect in index_effects("t", "u", change):
        if effect.kind == INDEX_REMOVE:
            removed += ranker_pb.RemoveRequest.FromString(effect.payload).doc_ids
        elif effect.kind == INDEX_UPSERT:
            documents = ranker_pb.UpsertRequest.FromString(effect.payload).documents
            upserted += [d.digest.episode_id or d.digest.thread_id for d in documents]
    return removed, upserted


def test_a_digest_with_nothing_to_find_is_removed_from_the_index_not_upserted() -> None:
    said = build_digest("s1", [Turn("t1", "s1", Role.USER, "We planned the picnic menu.", 1)], [])
    empty = build_digest("s2", [], [])
    episode = Episode("s1#e1", "s1", "Picnic", "We planned the picnic menu.", (), ("t1",), 1)
    removed, upserted = _sent(IndexChange(removed=("old",), digests=(said, empty, episode)))
    assert upserted == ["s1", "s1#e1"]
    assert removed == ["old", "s2"]


def test_many_turns_go_in_upserts_each_small_enough_to_embed_within_an_attempt() -> None:
    turns = tuple(
        Turn(f"t{n:03d}", "s1", Role.USER, f"we planted herbs bed {n}", n) for n in range(450)
    )
    effects = [
        e for e in index_effects("t", "u", IndexChange(turns=turns)) if e.kind == INDEX_UPSERT
    ]
    sizes = [len(ranker_pb.UpsertRequest.FromString(e.payload).documents) for e in effects]
    assert sizes == [200, 200, 50]
    sent = [
        d.turn.turn_id
        for e in effects
        for d in ranker_pb.UpsertRequest.FromString(e.payload).documents
    ]
    assert sent == [t.turn_id for t in turns]
