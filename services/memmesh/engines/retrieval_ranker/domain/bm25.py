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
import struct
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

from memmesh.engines.retrieval_ranker.domain.dense import (
    DEFAULT_DENSE_POLICY,
    DenseIndex,
    DensePolicy,
)
from memmesh.engines.retrieval_ranker.domain.documents import IndexDoc
from memmesh.engines.retrieval_ranker.domain.slots import SlotTable

MICROS = 1_000_000
# numpy computes a term's gains in int64 while numerator x tf stays below this; above it
# (only with a huge corpus) in Python integers, so a score never wraps.
INT64_SAFE = 2**62
# A term's postings arrays are kept between queries from this many postings up (below it,
# numpy's per-array overhead outweighs the saving: RANKING.md).
CACHED_ARRAYS_MIN_POSTINGS = 64
# A posting is one int64: the document's slot shifted left by TF_BITS, then its tf. A tf
# this large would take a document of 16 million words, far past any request's size limit.
TF_BITS = 24
TF_MASK = (1 << TF_BITS) - 1
# Two or more postings are kept packed (native int64s) in bytes or a bytearray: unlike
# array.array, neither is tracked by the garbage collector, whose full passes would otherwise
# walk every multi-posting term of every cached user (tens of milliseconds at 50,000
# documents, with every call the ranker serves waiting). Up to SMALL_POSTINGS_MAX_BYTES they
# are immutable bytes (33 bytes of header, no spare room), past it a bytearray, which grows
# in place (a bytes would be copied whole by every posting added).
_POSTING = struct.Struct("=q")
_TWO_POSTINGS = struct.Struct("=2q")
SMALL_POSTINGS_MAX_BYTES = 16 * _POSTING.size


def idf_micros(document_count: int, document_frequency: int) -> int:
    """Lucene's BM25 idf, ln(1 + (N - df + 0.5) / (df + 0.5)), in micro-units."""
    ratio = (2 * (document_count - document_frequency) + 1) / (2 * document_frequency + 1)
    return round(math.log1p(ratio) * MICROS)


class KindIndex:
    """Postings of one document kind; updates are incremental, scoring reads them directly.

    A term's postings are the slots of the documents holding it, each with its tf, packed
    in one int64 (TF_BITS), unordered in a bytes (a few) or a bytearray (more): 8 bytes a
    posting, where a dict of ids took about 40 (the document's length is its slot's,
    slots.py); a term one document holds keeps its one posting as a plain int. A slot is freed only
    once its postings are gone, so a posting never names a reused slot. The postings of a
    term of CACHED_ARRAYS_MIN_POSTINGS documents or more are also kept as numpy arrays of
    slots and tfs, made when a query first reads the term and dropped when a document with
    the term comes or goes.
    """

    def __init__(self) -> None:
        # The documents, by id and by slot, and their vectors by slot.
        self.slots = SlotTable()
        self.dense = DenseIndex()
        # term -> its packed postings: the one posting itself while one document holds
        # the term (most of a user's terms: an array would cost three times as much), packed
        # bytes or a bytearray from two up
        self._postings: dict[str, Postings] = {}
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
        """The document with this id (without its vector), if indexed."""
        return self.slots.get(doc_id)

    def docs(self) -> Iterator[IndexDoc]:
        """Every document (without its vector), in no particular order (callers sort)."""
        return self.slots.docs()

    def add(self, doc: IndexDoc) -> None:
        """Index a document, replacing one with the same id."""
        counts = _term_counts(doc)
        self.remove(doc.doc_id)
        slot = self.slots.add(doc)
        self._post(doc, counts, slot)
        self.dense.add(slot, doc.vector)

    def extend(self, docs: list[IndexDoc]) -> None:
        """add() each of these documents, none of them indexed yet and no two with one id (a
        whole load): their slots are filled at once."""
        counts = [_term_counts(doc) for doc in docs]
        slots = self.slots.extend(docs)
        for doc, doc_counts, slot in zip(docs, counts, slots, strict=True):
            self._post(doc, doc_counts, slot)
        self.dense.extend([(slot, doc.vector) for doc, slot in zip(docs, slots, strict=True)])

    def _post(self, doc: IndexDoc, counts: Counter[str], slot: int) -> None:
        """The document's postings, its length in the total."""
        self._total_length += len(doc.terms)
        # Runs for every term of every document a load reads: locals only.
        postings, arrays = self._postings, self._arrays
        packed_slot = slot << TF_BITS
        for term, tf in counts.items():
            posting = postings.get(term)
            if posting is None:
                postings[term] = packed_slot | tf
                continue
            # A term's arrays exist only while it has postings.
            arrays.pop(term, None)
            if isinstance(posting, int):
                postings[term] = _TWO_POSTINGS.pack(posting, packed_slot | tf)
            elif isinstance(posting, bytes):
                grown = posting + _POSTING.pack(packed_slot | tf)
                postings[term] = (
                    bytearray(grown) if len(grown) > SMALL_POSTINGS_MAX_BYTES else grown
                )
            else:
                posting += _POSTING.pack(packed_slot | tf)

    def remove(self, doc_id: str) -> IndexDoc | None:
        """Drop a document and its postings; returns it, or None when it was not indexed."""
        slot = self.slots.slot_of(doc_id)
        if slot is None:
            return None
        doc = self.slots.doc(slot)
        self._total_length -= len(doc.terms)
        packed_slot = slot << TF_BITS
        for term, tf in doc.term_counts().items():
            self._arrays.pop(term, None)
            posting = self._postings[term]
            if isinstance(posting, int):
                del self._postings[term]
                continue
            with memoryview(posting) as raw, raw.cast("q") as packed:
                at = packed.tolist().index(packed_slot | tf) * _POSTING.size
            if len(posting) == _TWO_POSTINGS.size:
                # The other posting is left, held as itself.
                self._postings[term] = _POSTING.unpack_from(posting, _POSTING.size - at)[0]
            elif isinstance(posting, bytes):
                self._postings[term] = posting[:at] + posting[at + _POSTING.size :]
            else:
                # Unordered: the last posting takes the removed one's place.
                posting[at : at + _POSTING.size] = posting[-_POSTING.size :]
                del posting[-_POSTING.size :]
        self.dense.remove(slot)
        self.slots.remove(doc_id)
        return doc

    def vector_of(self, doc_id: str) -> bytes:
        """An indexed document's vector (b'' for none): documents come back without it."""
        slot = self.slots.slot_of(doc_id)
        return b"" if slot is None else self.dense.vector_of(slot)

    def related(
        self, query: bytes, policy: DensePolicy = DEFAULT_DENSE_POLICY
    ) -> list[tuple[int, int]]:
        """(slot, similarity) of the documents related to a query vector, closest first
        (DenseIndex.related); a superseded document never is."""
        superseded = self.slots.superseded
        return self.dense.related(query, policy, superseded if superseded.any() else None)

    def score(self, terms: Iterable[str]) -> dict[str, int]:
        """BM25 score in micro-units of the documents matching the terms, by id (read one
        document at a time: score_slots gives the same scores by slot)."""
        count, total = len(self.slots), self._total_length
        if count == 0 or total == 0:
            return {}
        scores: dict[str, int] = {}
        for term in set(terms):
            if (posting := self._postings.get(term)) is not None:
                packed_postings = _each(posting)
                numerator = idf_micros(count, len(packed_postings)) * 20 * total
                for packed in packed_postings:
                    slot, tf = packed >> TF_BITS, packed & TF_MASK
                    length = int(self.slots.length[slot])
                    gain = numerator * tf // (8 * total * tf + 3 * total + 9 * count * length)
                    doc_id = self.slots.id_of(slot)
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
            arrays.gains = self._term_gains(arrays.tfs, self.slots.length[arrays.slots])
            arrays.statistics = statistics
        return arrays.slots, arrays.gains

    def _postings_arrays(self, term: str) -> TermArrays:
        # A copy: a view would pin the postings' buffer, and they grow in place.
        posting = self._postings[term]
        packed = (
            np.array([posting], dtype=np.int64)
            if isinstance(posting, int)
            else np.frombuffer(posting, dtype=np.int64).copy()
        )
        return TermArrays((packed >> TF_BITS).astype(np.intp), packed & TF_MASK)

    def _term_gains(self, tfs: NDArray[np.int64], lengths: NDArray[np.int64]) -> NDArray[np.int64]:
        """score()'s gain of a term for the documents holding it, with these tfs and lengths
        (numerator x tf is bounded by the largest tf)."""
        count, total = len(self.slots), self._total_length
        numerator = idf_micros(count, len(tfs)) * 20 * total
        denominators = 8 * total * tfs + 3 * total + 9 * count * lengths
        if numerator * int(tfs.max()) >= INT64_SAFE:
            exact: NDArray[np.object_] = (
                tfs.astype(object) * numerator // denominators.astype(object)
            )
            return exact.astype(np.int64)
        gains: NDArray[np.int64] = numerator * tfs // denominators
        return gains


# A term's packed postings (KindIndex): one posting, or two or more packed (_POSTING).
Postings: TypeAlias = "int | bytes | bytearray"


def _each(posting: Postings) -> Sequence[int]:
    """Every packed posting of a term, whether it holds one or many (a copy: the postings
    may change while the caller reads)."""
    if isinstance(posting, int):
        return (posting,)
    return [packed for (packed,) in _POSTING.iter_unpack(posting)]


def _term_counts(doc: IndexDoc) -> Counter[str]:
    """The document's term counts, refused (before anything changes) if one does not pack."""
    counts = doc.term_counts()
    if counts and max(counts.values()) > TF_MASK:
        raise ValueError(f"a term occurs more than {TF_MASK} times in {doc.doc_id!r}")
    return counts


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
