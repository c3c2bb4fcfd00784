"""The array-based selection (slots, numpy scoring, cut before sorting) returns exactly what
the ranking rule gives read one document at a time, on random small indexes changed between
queries (freed slots reused, cached term arrays and gains dropped or kept)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.engines.retrieval_ranker.domain import bm25
from memmesh.engines.retrieval_ranker.domain.bm25 import KindIndex
from memmesh.engines.retrieval_ranker.domain.dense import (
    DEFAULT_DENSE_POLICY,
    fused_scores,
    quantised,
)
from memmesh.engines.retrieval_ranker.domain.documents import (
    AtomSignals,
    Candidate,
    IndexDoc,
    Kind,
)
from memmesh.engines.retrieval_ranker.domain.ranking import (
    RankingPolicy,
    Related,
    select_atoms,
    select_by_relevance,
)

WORDS = ("tea", "coffee", "jazz", "like", "sarah", "garden")
# Few distinct directions, so documents tie on similarity as often as on BM25 score.
DIRECTIONS = [
    quantised((vector / np.linalg.norm(vector)).astype(np.float32))
    for vector in np.random.default_rng(3).normal(size=(4, 8))
]


def reference_relevance(
    index: KindIndex, terms: tuple[str, ...], policy: RankingPolicy, related: Related | None
) -> dict[str, int]:
    """BM25 scores, or the fusion of BM25's best candidates (ties kept) and the dense ranking."""
    if related is None:
        return index.score(terms)
    rankings = [[(index.slots.id_of(slot), similarity) for slot, similarity in related.ranking]]
    if related.lexical:
        scores = index.score(terms)
        best = max(scores.values(), default=0)
        lexical = sorted(
            (-score, doc_id)
            for doc_id, score in scores.items()
            if policy.tier(score, best) is not None
        )
        depth = DEFAULT_DENSE_POLICY.depth
        if len(lexical) > depth:
            lexical = [entry for entry in lexical if entry[0] <= lexical[depth - 1][0]]
        rankings.insert(0, [(doc_id, -negated) for negated, doc_id in lexical])
    return fused_scores(rankings)


def reference_candidates(
    index: KindIndex, terms: tuple[str, ...], policy: RankingPolicy, related: Related | None
) -> list[tuple[IndexDoc, int, int]]:
    """(document, score, band) of every candidate."""
    scores = reference_relevance(index, terms, policy, related)
    best = max(scores.values(), default=0)
    found = []
    for doc_id, score in scores.items():
        tier, doc = policy.tier(score, best), index.get(doc_id)
        if tier is not None and doc is not None and not doc.signals.superseded:
            found.append((doc, score, tier))
    return found


def reference_atoms(
    index: KindIndex,
    terms: tuple[str, ...],
    limit: int,
    policy: RankingPolicy,
    related: Related | None,
) -> tuple[Candidate, ...]:
    """The cap by (band, §2.11.9 order), listed in the §2.11.9 order."""
    if terms:
        found = reference_candidates(index, terms, policy, related)
    else:
        found = [(doc, 0, 0) for doc in index.docs() if not doc.signals.superseded]
    kept = sorted(found, key=lambda entry: (entry[2], entry[0].atom_order))[: max(limit, 0)]
    return tuple(
        Candidate(doc, score, tier)
        for doc, score, tier in sorted(kept, key=lambda entry: entry[0].atom_order)
    )


def reference_by_relevance(
    index: KindIndex,
    terms: tuple[str, ...],
    limit: int,
    policy: RankingPolicy,
    related: Related | None,
) -> tuple[Candidate, ...]:
    """Relevance, then newer time, then id."""
    if terms:
        found = reference_candidates(index, terms, policy, related)
    else:
        found = [(doc, 0, 0) for doc in index.docs()]
    ranked = sorted(found, key=lambda entry: (-entry[1], -entry[0].time_us, entry[0].doc_id))
    return tuple(Candidate(doc, score, tier) for doc, score, tier in ranked[: max(limit, 0)])


documents = st.builds(
    lambda number, words, time_us, signals, direction: IndexDoc(
        doc_id=f"d{number:03d}",
        kind=Kind.ATOM,
        terms=() if signals.superseded else tuple(words),
        time_us=time_us,
        signals=signals,
        payload=b"",
        vector=b"" if signals.superseded or direction is None else DIRECTIONS[direction],
    ),
    st.integers(0, 90),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    st.integers(0, 3),
    st.builds(
        AtomSignals,
        pinned=st.booleans(),
        provenance=st.integers(0, 4),
        confidence_bp=st.sampled_from([0, 5000, 9000]),
        last_use_us=st.sampled_from([0, 10]),
        use_count=st.integers(0, 2),
        superseded=st.integers(0, 9).map(lambda n: n == 0),
    ),
    st.one_of(st.none(), st.integers(0, len(DIRECTIONS) - 1)),
)
policies = st.builds(
    RankingPolicy,
    min_relevance_micros=st.sampled_from([1, 1000]),
    floor_percent=st.sampled_from([0, 25, 100]),
    tier_count=st.integers(1, 4),
)
modes = st.sampled_from(["bm25", "fused", "dense"])


def _related(index: KindIndex, direction: int, mode: str) -> Related | None:
    if mode == "bm25":
        return None
    return Related(index.related(DIRECTIONS[direction]), lexical=mode == "fused")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(documents, max_size=80),
    st.lists(documents, max_size=20),
    st.lists(st.sampled_from(WORDS), max_size=4),
    st.integers(0, len(DIRECTIONS) - 1),
    st.integers(0, 25),
    policies,
    modes,
    st.data(),
)
def test_array_selection_equals_the_rule_read_one_document_at_a_time(
    docs: list[IndexDoc],
    later: list[IndexDoc],
    query_words: list[str],
    direction: int,
    limit: int,
    policy: RankingPolicy,
    mode: str,
    data: st.DataObject,
) -> None:
    index = KindIndex()

    def check() -> None:
        terms = tuple(sorted(set(query_words)))
        related = _related(index, direction, mode) if terms else None
        assert index.score_slots(terms)[index.slots.held()].tolist() == [
            index.score(terms).get(index.slots.doc(slot).doc_id, 0)
            for slot in index.slots.held().tolist()
        ]
        assert select_atoms(index, terms, limit, policy, related) == reference_atoms(
            index, terms, limit, policy, related
        )
        assert select_by_relevance(index, terms, limit, policy, related) == reference_by_relevance(
            index, terms, limit, policy, related
        )

    for doc in docs:
        index.add(doc)
    check()
    # Changes after a query: freed slots are reused, cached term arrays and gains go stale.
    ids = sorted({doc.doc_id for doc in docs})
    removed = data.draw(st.lists(st.sampled_from(ids), unique=True)) if ids else []
    for doc_id in removed:
        index.remove(doc_id)
    check()
    for doc in later:
        index.add(doc)
    check()


def test_array_selection_equals_the_rule_past_the_fusion_depth() -> None:
    """Hundreds of tied candidates: BM25's best `depth` with ties, bands and caps cut inside
    ties, on an index with freed and reused slots."""
    rng = np.random.default_rng(11)
    index = KindIndex()
    for number in range(600):
        words = tuple(rng.choice(WORDS, size=int(rng.integers(1, 5))).tolist())
        doc = IndexDoc(
            doc_id=f"d{number % 450:03d}",
            kind=Kind.ATOM,
            terms=words,
            time_us=int(rng.integers(0, 4)),
            signals=AtomSignals(
                pinned=bool(rng.integers(0, 2)),
                provenance=int(rng.integers(0, 3)),
                confidence_bp=int(rng.choice([0, 9000])),
            ),
            payload=b"",
            vector=DIRECTIONS[int(rng.integers(0, len(DIRECTIONS)))],
        )
        if number % 7 == 0 and index.get(doc.doc_id) is not None:
            index.remove(doc.doc_id)
        index.add(doc)
    policy = RankingPolicy()
    for query in (("tea",), ("like", "tea"), ("coffee", "garden", "jazz"), WORDS):
        for mode in ("bm25", "fused", "dense"):
            for direction in range(len(DIRECTIONS)):
                related = _related(index, direction, mode)
                for limit in (1, 8, 20, 60, 500):
                    assert select_atoms(index, query, limit, policy, related) == reference_atoms(
                        index, query, limit, policy, related
                    )
                    assert select_by_relevance(
                        index, query, limit, policy, related
                    ) == reference_by_relevance(index, query, limit, policy, related)


def test_scores_too_large_for_int64_arithmetic_are_computed_exactly() -> None:
    index = KindIndex()
    signals = AtomSignals()
    # numerator x tf passes 2^62 (INT64_SAFE): the gains are computed in Python integers.
    index.add(IndexDoc("big", Kind.TURN, ("tea",) * 1_000_000 + ("jazz",), 0, signals, b""))
    index.add(IndexDoc("small", Kind.TURN, ("tea", "coffee"), 0, signals, b""))
    index.add(IndexDoc("other", Kind.TURN, ("coffee",), 0, signals, b""))
    scores = index.score(("tea", "jazz"))
    by_slot = index.score_slots(("tea", "jazz"))
    assert {
        doc_id: int(by_slot[slot])
        for doc_id in scores
        if (slot := index.slots.slot_of(doc_id)) is not None
    } == scores


def test_a_document_whose_tf_does_not_pack_is_refused_and_the_index_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # TF_BITS leaves 16 million occurrences a term; here three, to show the refusal.
    monkeypatch.setattr(bm25, "TF_MASK", 3)
    index = KindIndex()
    kept = IndexDoc("kept", Kind.TURN, ("tea", "tea", "jazz"), 1, AtomSignals(), b"k")
    index.add(kept)
    with pytest.raises(ValueError, match="more than 3 times"):
        index.add(IndexDoc("kept", Kind.TURN, ("tea",) * 4, 2, AtomSignals(), b"x"))
    with pytest.raises(ValueError, match="more than 3 times"):
        index.extend([IndexDoc("other", Kind.TURN, ("jazz",) * 5, 2, AtomSignals(), b"y")])
    assert list(index.docs()) == [kept]
    alone = KindIndex()
    alone.add(kept)
    assert index.score(("tea", "jazz")) == alone.score(("tea", "jazz"))
    assert (
        index.score_slots(("tea", "jazz")).tolist() == alone.score_slots(("tea", "jazz")).tolist()
    )
