"""A kind's documents keep their payloads and terms in one packed record buffer: whatever is
added, replaced and removed, a document comes back as it went in, scoring agrees with an
index built from the survivors, and freed records are packed away."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.engines.retrieval_ranker.domain.bm25 import KindIndex
from memmesh.engines.retrieval_ranker.domain.documents import NO_SIGNALS, IndexDoc, Kind
from memmesh.engines.retrieval_ranker.domain.slots import RECORDS_COMPACT_MIN_BYTES

# Index terms are runs of letters and digits, in any script.
terms = st.text(st.sampled_from("abx09éß中"), min_size=1, max_size=3)
documents = st.builds(
    lambda n, words, payload, time: IndexDoc(
        f"doc-{n}", Kind.TURN, tuple(words), time, NO_SIGNALS, payload
    ),
    st.integers(0, 30),
    st.lists(terms, max_size=6),
    st.binary(max_size=900),
    st.integers(0, 10**15),
)
steps = st.lists(st.one_of(documents, st.integers(0, 30).map(lambda n: f"doc-{n}")), max_size=90)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_documents_come_back_as_added_through_replacements_removals_and_packing(steps) -> None:
    index, model = KindIndex(), {}
    for step in steps:
        if isinstance(step, IndexDoc):
            index.add(step)
            model[step.doc_id] = step
        else:
            assert (index.remove(step) is not None) == (model.pop(step, None) is not None)
        for doc_id, doc in model.items():
            assert index.get(doc_id) == doc
    fresh = KindIndex()
    for doc in model.values():
        fresh.add(doc)
    every_term = {term for doc in model.values() for term in doc.terms}
    assert sorted(index.docs(), key=lambda d: d.doc_id) == sorted(
        model.values(), key=lambda d: d.doc_id
    )
    assert index.score(every_term) == fresh.score(every_term)


def test_freed_records_are_packed_away() -> None:
    index = KindIndex()
    payload = bytes(range(256)) * 2
    for n in range(100):
        index.add(IndexDoc(f"doc-{n}", Kind.TURN, ("tea", f"w{n}"), n, NO_SIGNALS, payload))
    for n in range(90):
        index.remove(f"doc-{n}")
    # Ten documents of about 520 bytes are left; what was freed past half of all is gone.
    assert index.slots.record_bytes <= 2 * 10 * 520 + RECORDS_COMPACT_MIN_BYTES
    fresh = KindIndex()
    for n in range(90, 100):
        doc = index.get(f"doc-{n}")
        assert doc is not None and doc.payload == payload and doc.terms == ("tea", f"w{n}")
        fresh.add(doc)
    # "tea" went past the small postings (immutable bytes) to a growing bytearray and back.
    assert index.score(["tea", "w95"]) == fresh.score(["tea", "w95"])


def test_a_removed_documents_words_leave_the_records_at_once() -> None:
    index = KindIndex()
    kept, forgotten = b"tea with milk", b"my allergist Dr Okafor"
    index.add(IndexDoc("kept", Kind.TURN, ("tea", "milk"), 1, NO_SIGNALS, kept))
    index.add(IndexDoc("gone", Kind.TURN, ("allergist", "okafor"), 2, NO_SIGNALS, forgotten))
    index.remove("gone")
    # Far below the packing threshold: the freed record is still in the buffer, zeroed.
    records = bytes(index.slots._records)
    assert forgotten not in records and b"okafor" not in records
    assert kept in records
