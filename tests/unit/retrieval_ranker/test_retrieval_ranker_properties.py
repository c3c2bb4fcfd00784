"""Properties over random indexes and queries: caps, determinism, removal, and the pruned
scoring agreeing with a plain reading of the ranking rule."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from ranker_fakes import atom, atom_doc, turn, turn_doc

from memmesh.bench.retrieve import corpus
from memmesh.engines.retrieval_ranker.domain.documents import Caps, Kind
from memmesh.engines.retrieval_ranker.domain.ranking import DEFAULT_POLICY, atom_order_key
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import UserIndex

ANALYZER = Analyzer()
WORDS = [
    "tea",
    "coffee",
    "sister",
    "sarah",
    "tennis",
    "garden",
    "lisbon",
    "dog",
    "music",
    "jazz",
    "book",
    "run",
]

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
atoms = st.builds(
    lambda n, text, pinned, provenance, confidence, last_use, uses: atom_doc(
        atom(
            f"a{n:02d}",
            text,
            key=f"topic.{text.split()[0]}",
            pinned=pinned,
            provenance=provenance,
            confidence_bp=confidence,
            last_use_time=last_use,
            use_count=uses,
        )
    ),
    st.integers(0, 40),
    texts,
    st.booleans(),
    st.integers(1, 4),
    st.sampled_from([0, 5000, 9000]),
    st.sampled_from([0, 10, 20]),
    st.integers(0, 3),
)
turns = st.builds(
    lambda n, text, time: turn_doc(turn(f"t{n:02d}", text, time)),
    st.integers(0, 40),
    texts,
    st.integers(0, 5),
)
caps = st.builds(Caps, st.integers(0, 20), st.integers(0, 50), st.integers(0, 5))


def reference_retrieve(index: UserIndex, query: str, cap: Caps) -> tuple[list[str], list[str]]:
    """The ranking rule read plainly: full scores, floor, bands, cap by (band, order), output by order."""
    terms = ANALYZER.query_terms(query)
    out = []
    for kind, limit in ((Kind.ATOM, cap.max_atoms), (Kind.TURN, cap.max_turns)):
        kind_index = index._kinds[kind]  # noqa: SLF001 - the reference reads the same postings
        scores = kind_index.score(terms)
        best = max(scores.values(), default=0)
        candidates = [
            (DEFAULT_POLICY.tier(score, best), score, kind_index.get(doc_id))
            for doc_id, score in scores.items()
            if DEFAULT_POLICY.tier(score, best) is not None
        ]
        if not terms:
            everything = sorted(kind_index.docs(), key=atom_order_key)[:limit]
            out.append([] if kind == Kind.TURN else [d.doc_id for d in everything])
            continue
        if kind == Kind.ATOM:
            kept = sorted(candidates, key=lambda c: (c[0], atom_order_key(c[2])))[:limit]
            out.append([c[2].doc_id for c in sorted(kept, key=lambda c: atom_order_key(c[2]))])
        else:
            kept = sorted(candidates, key=lambda c: (-c[1], -c[2].time_us, c[2].doc_id))[:limit]
            out.append([c[2].doc_id for c in kept])
    return out[0], out[1]  # type: ignore[return-value]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(atoms, max_size=30),
    st.lists(turns, max_size=30),
    st.lists(st.sampled_from(WORDS)),
    caps,
    st.data(),
)
def test_caps_determinism_removal_and_the_rule(
    atom_docs, turn_docs, query_words, cap, data
) -> None:  # type: ignore[no-untyped-def]
    docs = list({doc.doc_id: doc for doc in atom_docs + turn_docs}.values())
    removed = set(
        data.draw(st.lists(st.sampled_from([d.doc_id for d in docs]), unique=True)) if docs else []
    )
    query = " ".join(query_words)

    forward = UserIndex(docs=docs)
    for doc_id in sorted(removed):
        forward.remove(doc_id)
    backward = UserIndex(docs=[d for d in reversed(docs) if d.doc_id not in removed])

    result = forward.retrieve(ANALYZER.query_terms(query), cap)
    assert result == backward.retrieve(ANALYZER.query_terms(query), cap)
    assert forward.checksum() == backward.checksum()

    assert len(result.atoms) <= cap.max_atoms and len(result.turns) <= cap.max_turns
    returned = {c.doc.doc_id for c in result.atoms + result.turns + result.digests}
    assert not returned & removed
    assert [c.doc for c in result.atoms] == sorted(
        (c.doc for c in result.atoms), key=atom_order_key
    )

    expected_atoms, expected_turns = reference_retrieve(forward, query, cap)
    assert [c.doc.doc_id for c in result.atoms] == expected_atoms
    assert [c.doc.doc_id for c in result.turns] == expected_turns


def test_pruned_scoring_agrees_with_the_rule_on_a_large_index() -> None:
    docs, queries = corpus(600, 600, head_offset=0)
    index = UserIndex(docs=docs)
    for query in queries[:60]:
        for cap in (Caps(20, 2, 0), Caps(5, 20, 0)):
            result = index.retrieve(ANALYZER.query_terms(query), cap)
            assert (
                [c.doc.doc_id for c in result.atoms],
                [c.doc.doc_id for c in result.turns],
            ) == reference_retrieve(index, query, cap)
