"""Ranker candidates in domain terms: each kind read from its own source record."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.engines.context_composer.domain.model import Bundle, Digest, Entity
from memmesh.engines.context_composer.mapping import (
    bundle_message,
    retrieved_of,
    session_context_of,
)
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb


def test_candidates_keep_their_source_records_and_index_ids() -> None:
    atom = memory_pb2.Atom(
        atom_id="a1",
        key="preference.tea",
        text="User likes tea.",
        exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
    )
    turn = memory_pb2.Turn(
        turn_id="t1",
        session_id="s1",
        role=memory_pb2.ROLE_USER,
        text="tea please",
        exposure=memory_pb2.EXPOSURE_SAFE_TO_TEXT,
    )
    episode = memory_pb2.Digest(
        thread_id="s1",
        episode_id="s1#e2",
        title="Tea",
        summary="We spoke about tea.",
        key_entities=["Assam"],
        evidence_turn_ids=["t1"],
    )
    response = ranker_pb.RetrieveResponse(
        atoms=[ranker_pb.Candidate(document=ranker_pb.Document(atom=atom), doc_id="a1")],
        turns=[
            ranker_pb.Candidate(document=ranker_pb.Document(turn=turn), doc_id="t1"),
            ranker_pb.Candidate(document=ranker_pb.Document(), doc_id="t2"),
        ],
        digests=[ranker_pb.Candidate(document=ranker_pb.Document(digest=episode), doc_id="s1#e2")],
    )
    retrieved = retrieved_of(response)
    assert [(a.atom_id, a.exposure) for a in retrieved.atoms] == [("a1", "SAFE_TO_SPEAK")]
    assert [(t.turn_id, t.session_id, t.exposure) for t in retrieved.turns] == [
        ("t1", "s1", "SAFE_TO_TEXT"),
        ("t2", "", "UNSPECIFIED"),
    ]
    (digest,) = retrieved.digests
    assert (digest.digest_id, digest.thread_id, digest.title) == ("s1#e2", "s1", "Tea")
    assert digest.summary == "We spoke about tea. Assam" and digest.evidence_turn_ids == ("t1",)


def test_the_turn_context_carries_its_entities_or_none_when_their_part_failed() -> None:
    entities = thread_pb.ExpandResponse(
        nodes=[
            thread_pb.GraphNode(node_id="entity:sarah", label="Sarah"),
            thread_pb.GraphNode(node_id="entity:tom", label="Tom"),
        ],
        edges=[thread_pb.GraphEdge(from_node_id="entity:sarah", to_node_id="entity:tom", weight=2)],
    )
    answered = session_context_of(
        thread_pb.GetTurnContextResponse(mode=bundle_pb2.SESSION_MODE_IN_SESSION, entities=entities)
    )
    assert answered.entities == (Entity("entity:tom", "Tom", "entity:sarah", "Sarah", 2),)
    assert (
        session_context_of(
            thread_pb.GetTurnContextResponse(mode=bundle_pb2.SESSION_MODE_IN_SESSION)
        ).entities
        == ()
    )
    failed = session_context_of(
        thread_pb.GetTurnContextResponse(
            mode=bundle_pb2.SESSION_MODE_IN_SESSION, entities_unavailable=True
        )
    )
    assert failed.entities is None and failed.mode == "IN_SESSION"


def retrieved_digest(episode: memory_pb2.Digest) -> Digest:
    """The one digest a ranker response holding this episode under its id maps to."""
    candidate = ranker_pb.Candidate(
        document=ranker_pb.Document(digest=episode), doc_id=episode.episode_id
    )
    (digest,) = retrieved_of(ranker_pb.RetrieveResponse(digests=[candidate])).digests
    return digest


def test_key_entities_the_title_or_summary_already_names_are_not_repeated() -> None:
    episode = memory_pb2.Digest(
        thread_id="s1",
        episode_id="s1#e1",
        title="Mel, Melanie, Pottery",
        summary="Thanks, Melanie! The pottery class is on Tuesdays.",
        key_entities=["Mel", "Melanie", "Pottery", "Tuesdays", "Clay"],
        evidence_turn_ids=["t1"],
    )
    digest = retrieved_digest(episode)
    # "Mel" is in the title as a word of its own; "Clay" nowhere but the entities.
    assert digest.summary == "Thanks, Melanie! The pottery class is on Tuesdays. Clay"


def test_a_digest_in_the_bundle_says_when_what_it_summarises_was_said() -> None:
    # "I signed up for a pottery class yesterday" answers "when" only with the session's date.
    said_at = Timestamp(seconds=1_688_391_810)
    episode = memory_pb2.Digest(
        thread_id="s5",
        episode_id="s5#e1",
        title="Pottery",
        summary="I signed up for a pottery class yesterday.",
        evidence_turn_ids=["t4"],
        update_time=said_at,
    )
    digest = retrieved_digest(episode)
    message = bundle_message(Bundle(now_us=0, mode="IN_SESSION", digests=(digest,)))
    assert message.digests[0].time == said_at
    undated = bundle_message(
        Bundle(now_us=0, mode="IN_SESSION", digests=(digest._replace(time_us=0),))
    )
    assert not undated.digests[0].HasField("time")
