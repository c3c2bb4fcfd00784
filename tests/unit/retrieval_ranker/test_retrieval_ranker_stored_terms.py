"""A stored row keeps the terms its document was analysed into, so reading a user's index
analyses no text; terms of another analysis, or none, are derived again. An index read whole
equals one built document by document."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from ranker_fakes import ANALYZER, atom, atom_doc, digest, digest_doc, turn, turn_doc

from memmesh import text
from memmesh.common.v1 import memory_pb2
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.domain.dense import DenseIndex, DensePolicy, quantised
from memmesh.engines.retrieval_ranker.domain.documents import Caps, IndexDoc
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import UserIndex
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb

CODEC = mapping.DocumentCodec(ANALYZER)
CAPS = Caps(max_atoms=10, max_turns=5, max_digests=3)


def _documents() -> list[IndexDoc]:
    return [
        atom_doc(atom("a1", "User is allergic to peanuts.", key="health.allergy", topics=["food"])),
        atom_doc(atom("a2", "User's sister Ana lives in Porto.", key="family.sister")),
        atom_doc(
            atom(
                "a3",
                "User lives in Lisbon.",
                key="home.city",
                status=memory_pb2.ATOM_STATUS_SUPERSEDED,
            )
        ),
        turn_doc(turn("t1", "We drove to Porto to see Ana's new flat", 10)),
        turn_doc(turn("t2", "Peanut butter cookies again? No thanks", 20)),
        digest_doc(digest("th1", "Porto trip", "Planning the drive north", 30)),
    ]


def test_a_row_keeps_its_terms_and_reads_back_as_the_same_document() -> None:
    for doc in _documents():
        row = CODEC.encode(doc, version=7)
        assert row.version == 7 and row.payload == doc.payload
        assert row.terms.split(" ")[1:] == (list(doc.terms) or [""])
        assert CODEC.decode(row) == doc


@pytest.mark.parametrize("stored_terms", ["", "0.000000000000 stale words", "garbage"])
def test_terms_of_another_analysis_or_none_are_derived_again(stored_terms: str) -> None:
    for doc in _documents():
        row = replace(CODEC.encode(doc), terms=stored_terms)
        assert CODEC.decode(row) == doc


def test_the_fingerprint_changes_with_the_stop_words(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Analyzer().fingerprint == ANALYZER.fingerprint
    row = CODEC.encode(_documents()[1])
    assert "porto" in row.terms.split(" ")
    from memmesh.engines.retrieval_ranker.domain import text as ranker_text

    monkeypatch.setattr(ranker_text, "INDEX_STOP_WORDS", text.INDEX_STOP_WORDS | {"porto"})
    changed = Analyzer()
    assert changed.fingerprint != ANALYZER.fingerprint
    # So a row written under the old analysis is analysed again, without the new stop word.
    assert "porto" not in mapping.DocumentCodec(changed).decode(row).terms


def test_an_index_read_whole_equals_one_built_document_by_document() -> None:
    docs = _documents()
    # A later document of the same id wins, as in a sequence of upserts.
    moved = turn_doc(turn("a2", "Ana moved from Porto to Braga", 40))
    whole = UserIndex(3, [*docs, moved])
    one_by_one = UserIndex(3)
    for doc in [*docs, moved]:
        one_by_one.upsert(doc)
    assert whole.checksum() == one_by_one.checksum()
    assert whole.count() == one_by_one.count() == len(docs)
    assert whole.approximate_bytes() == one_by_one.approximate_bytes()
    assert whole.standing_constraints() == one_by_one.standing_constraints()
    for query in ("peanut cookies", "porto", "braga ana", "lisbon"):
        terms = ANALYZER.query_terms(query)
        assert whole.retrieve(terms, CAPS) == one_by_one.retrieve(terms, CAPS)


def _unit_vectors(count: int, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(count, 64)).astype(np.float32)
    return [quantised(row / np.linalg.norm(row)) for row in rows]


def test_vectors_added_together_rank_as_vectors_added_one_at_a_time() -> None:
    vectors = _unit_vectors(40, seed=3)
    together, alone = DenseIndex(), DenseIndex()
    together.extend(list(enumerate(vectors[:25])))
    together.extend(list(enumerate(vectors[25:], start=25)))
    together.extend([(3, b""), (7, vectors[0])])  # one dropped, one replaced
    for number, vector in enumerate(vectors):
        alone.add(number, vector)
    alone.add(3, b"")
    alone.add(7, vectors[0])
    loose = DensePolicy(min_cosine_percent=-100, relative_percent=0, depth=40)
    for query in vectors[:5]:
        assert together.related(query, loose) == alone.related(query, loose)
    assert len(together) == len(alone) == 39


def test_vectors_of_another_width_are_refused_and_leave_the_index_as_it_was() -> None:
    index = DenseIndex()
    index.extend([(0, _unit_vectors(1, seed=1)[0])])
    with pytest.raises(ValueError, match="dimensions"):
        index.extend([(1, b"\x01\x02\x03")])
    assert len(index) == 1


def test_only_a_few_atoms_or_digests_are_mapped_on_the_event_loop() -> None:
    def request(*documents: pb.Document) -> pb.UpsertRequest:
        return pb.UpsertRequest(documents=documents)

    few = [pb.Document(atom=atom(f"a{n}", "User likes tea.")) for n in range(2)]
    assert mapping.maps_quickly(request(*few, pb.Document(digest=digest("t1", "Tea", "", 1))))
    # A turn waits for the sentence encoder; a large batch holds the loop too long.
    assert not mapping.maps_quickly(request(*few, pb.Document(turn=turn("t1", "hi", 1))))
    many = [pb.Document(atom=atom(f"a{n}", "x")) for n in range(mapping.QUICK_UPSERT_DOCUMENTS + 1)]
    assert not mapping.maps_quickly(request(*many))
    # A document with no source is mapped where its error is raised, not here.
    assert mapping.maps_quickly(request(pb.Document()))
