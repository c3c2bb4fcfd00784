"""A BM25 inverted index over one kind of document, scored in integer micro-units.

BM25 (k1 = 1.5, b = 0.75, the Lucene idf) with the term-frequency part reduced to one
integer division, so a score never depends on float summation order:

    tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))  ==  20 tf T / (8 T tf + 3 T + 9 dl N)

where T is the total length of the documents and N their number. The idf is a logarithm,
rounded once to micro-units per query term. A query is scored over every document its
terms match, one numpy operation per term (score_slots); score() is the same sum read
plainly, one document at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from memmesh.engines.retrieval_ranker.domain.documents import IndexDoc
from memmesh.engines.retrieval_ranker.domain.slots import SlotTable

MICROS = 1_000_000
# numpy computes a term's gains in int64 while numerator x tf stays below this; above it
# (only with a huge corpus) in Python integers, so a score never wraps.
INT64_SAFE = 2**62
# A term's postings arrays are kept between queries from this many postings up (below it,
# numpy's per-array overhead outweighs the saving: RANKING.md).
CACHED_ARRAYS_MIN_POSTINGS = 64


def idf_micros(document_count: int, document_frequency: int) -> int:
    """Lucene's BM25 idf, ln(1 + (N - df + 0.5) / (df + 0.5)), in micro-units."""
    ratio = (2 * (document_count - document_frequency) + 1) / (2 * document_frequency + 1)
    return round(math.log1p(ratio) * MICROS)


class KindIndex:
    """Postings of one document kind; updates are incremental, scoring reads them directly.

    A term's postings map each document id holding the term to its tf (the document's
    length is its slot's, slots.py). Documents are held by slot, and the postings of a term
    of CACHED_ARRAYS_MIN_POSTINGS documents or more are also kept as arrays of slots and
    tfs, made when a query first reads the term and dropped when a document with the term
    comes or goes.
    """

    def __init__(self) -> None:
        # The documents, by id and by slot.
        self.slots = SlotTable()
        # term -> document id -> tf; a term's document frequency is its postings' length
        self._postings: dict[str, dict[str, int]] = {}
        # Per term, the highest tf ever indexed with it: it bounds numerator x tf when a
        # term's gains are computed (looser after removals, never wrong).
        self._top_tf: dict[str, int] = {}
        # term -> its postings' slots and tfs, for the terms read since they last changed
        self._arrays: dict[str, TermArrays] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self.slots)

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and self.slots.slot_of(doc_id) is not None

    @property
    def array_bytes(self) -> int:
        """Bytes held by the postings' arrays of the terms read (the slot columns are counted
        per document: user_index.SLOT_BYTES)."""
        return sum(held.nbytes for held in self._arrays.values())

    def get(self, doc_id: str) -> IndexDoc | None:
        """The document with this id, if indexed."""
        return self.slots.get(doc_id)

    def docs(self) -> Iterator[IndexDoc]:
        """Every document, in no particular order (callers sort)."""
        return self.slots.docs()

    def add(self, doc: IndexDoc) -> None:
        """Index a document, replacing one with the same id."""
        self.remove(doc.doc_id)
        self.slots.add(doc)
        self._post(doc)

    def extend(self, docs: list[IndexDoc]) -> None:
        """add() each of these documents, none of them indexed yet and no two with one id (a
        whole load): their slots are filled at once."""
        self.slots.extend(docs)
        for doc in docs:
            self._post(doc)

    def _post(self, doc: IndexDoc) -> None:
        """The document's postings, its length in the total."""
        doc_id = doc.doc_id
        self._total_length += len(doc.terms)
        # Runs for every term of every document a load reads: locals only.
        postings, top_tf, arrays = self._postings, self._top_tf, self._arrays
        for term, tf in doc.term_counts().items():
            posting = postings.get(term)
            if posting is None:
                postings[term] = {doc_id: tf}
                top_tf[term] = tf
                continue
            # A term's arrays exist only while it has postings.
            arrays.pop(term, None)
            posting[doc_id] = tf
            if tf > top_tf[term]:
                top_tf[term] = tf

    def remove(self, doc_id: str) -> IndexDoc | None:
        """Drop a document and its postings; returns it, or None when it was not indexed."""
        doc = self.slots.get(doc_id)
        if doc is None:
            return None
        self.slots.remove(doc_id)
        self._total_length -= len(doc.terms)
        for term in set(doc.terms):
            self._arrays.pop(term, None)
            posting = self._postings[term]
            del posting[doc_id]
            if not posting:
                del self._postings[term], self._top_tf[term]
        return doc

    def score(self, terms: Iterable[str]) -> dict[str, int]:
        """BM25 score in micro-units of the documents matching the terms, by id (read one
        document at a time: score_slots gives the same scores by slot)."""
        count, total = len(self.slots), self._total_length
        if count == 0 or total == 0:
            return {}
        scores: dict[str, int] = {}
        for term in set(terms):
            if posting := self._postings.get(term):
                numerator = idf_micros(count, len(posting)) * 20 * total
                for doc_id, tf in posting.items():
                    length = int(self.slots.length[self.slots.slot_of_indexed(doc_id)])
                    gain = numerator * tf // (8 * total * tf + 3 * total + 9 * count * length)
                    scores[doc_id] = scores.get(doc_id, 0) + gain
        return scores

    def score_slots(self, terms: Iterable[str]) -> NDArray[np.int64]:
        """BM25 score in micro-units of every slot (0 for a document no term matches, and
        for a free slot), one array operation per term: score() by slot."""
        scores = np.zeros(self.slots.size, dtype=np.int64)
        if not len(self.slots) or not self._total_length:
            return scores
        for term in set(terms):
            if term in self._postings:
                slots, gains = self._gains(term)
                scores[slots] += gains
        return scores

    def _gains(self, term: str) -> tuple[NDArray[np.intp], NDArray[np.int64]]:
        """The slots of the term's postings and what the term adds to each one's score."""
        arrays = self._arrays.get(term)
        if arrays is None:
            arrays = self._postings_arrays(term)
            # Below the threshold they are made again each time: cheap at that size, and kept
            # they would cost more than the postings themselves (a user of a few hundred
            # documents has hundreds of such terms).
            if len(arrays.slots) >= CACHED_ARRAYS_MIN_POSTINGS:
                self._arrays[term] = arrays
        statistics = (len(self.slots), self._total_length)
        if arrays.statistics != statistics:
            arrays.gains = self._term_gains(term, arrays.tfs, self.slots.length[arrays.slots])
            arrays.statistics = statistics
        return arrays.slots, arrays.gains

    def _postings_arrays(self, term: str) -> TermArrays:
        posting = self._postings[term]
        # Postings hold ids, not slots (a slot is reused once freed): these arrays are made
        # again only after the term changed.
        count = len(posting)
        slots = np.fromiter(map(self.slots.slot_of_indexed, posting), dtype=np.intp, count=count)
        tfs = np.fromiter(posting.values(), dtype=np.int64, count=count)
        return TermArrays(slots, tfs)

    def _term_gains(
        self, term: str, tfs: NDArray[np.int64], lengths: NDArray[np.int64]
    ) -> NDArray[np.int64]:
        """score()'s gain of the term for documents with these tfs and lengths."""
        count, total = len(self.slots), self._total_length
        numerator = idf_micros(count, len(self._postings[term])) * 20 * total
        denominators = 8 * total * tfs + 3 * total + 9 * count * lengths
        if numerator * self._top_tf[term] >= INT64_SAFE:
            exact: NDArray[np.object_] = (
                tfs.astype(object) * numerator // denominators.astype(object)
            )
            return exact.astype(np.int64)
        gains: NDArray[np.int64] = numerator * tfs // denominators
        return gains


@dataclass
class TermArrays:
    """A term's postings as arrays of slots and tfs, and its gains as of `statistics`
    (documents, total length): a document added or removed anywhere changes the gains, and
    one with this term drops the arrays."""

    slots: NDArray[np.intp]
    tfs: NDArray[np.int64]
    gains: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    statistics: tuple[int, int] = (0, 0)

    @property
    def nbytes(self) -> int:
        return int(self.slots.nbytes + self.tfs.nbytes + self.gains.nbytes)
