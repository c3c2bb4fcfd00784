"""An index read whole (a load) is the index its documents make upserted one by one."""

from __future__ import annotations

import numpy as np

from memmesh.bench.retrieve import CAPS, analyzer_for, corpus
from memmesh.engines.retrieval_ranker.domain.dense import RetrievalMode
from memmesh.engines.retrieval_ranker.domain.documents import Kind
from memmesh.engines.retrieval_ranker.domain.user_index import UserIndex, summary_of


def test_a_whole_load_equals_upserting_each_document() -> None:
    analyzer = analyzer_for(RetrievalMode.FUSED)
    docs, queries = corpus(300, 300, analyzer=analyzer)
    # A repeated id counts once, as its last document.
    docs = [*docs, docs[5]]
    whole = UserIndex(1, docs)
    one_by_one = UserIndex(1)
    for doc in docs:
        one_by_one.upsert(doc)
    assert summary_of(whole) == summary_of(one_by_one)
    # The same bytes apart from the dense matrices' spare rows (one fill against growing).
    assert (
        whole.approximate_bytes() - whole.dense_bytes()
        == one_by_one.approximate_bytes() - one_by_one.dense_bytes()
    )
    assert whole.standing_constraints() == one_by_one.standing_constraints()
    for kind in Kind:
        mine, theirs = whole._kinds[kind].slots, one_by_one._kinds[kind].slots
        held = mine.held()
        assert np.array_equal(held, theirs.held())
        for column in ("order", "newest_first", "length", "superseded"):
            assert np.array_equal(getattr(mine, column)[held], getattr(theirs, column)[held])
    for query in queries[:40]:
        terms, vector = analyzer.query_terms(query), analyzer.query_vectors(query)
        assert whole.retrieve(terms, CAPS, (), vector, RetrievalMode.FUSED) == one_by_one.retrieve(
            terms, CAPS, (), vector, RetrievalMode.FUSED
        )
