"""A BM25 inverted index over one kind of document, scored in integer micro-units.

BM25 (k1 = 1.5, b = 0.75, the Lucene idf) with the term-frequency part reduced to one
integer division, so a score never depends on float summation order:

    tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))  ==  20 tf T / (8 T tf + 3 T + 9 dl N)

where T is the total length of the documents and N their number. The idf is a logarithm,
rounded once to micro-units per query term.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator

from memmesh.engines.retrieval_ranker.domain.documents import IndexDoc

MICROS = 1_000_000


def idf_micros(document_count: int, document_frequency: int) -> int:
    """Lucene's BM25 idf, ln(1 + (N - df + 0.5) / (df + 0.5)), in micro-units."""
    ratio = (2 * (document_count - document_frequency) + 1) / (2 * document_frequency + 1)
    return round(math.log1p(ratio) * MICROS)


class KindIndex:
    """Postings of one document kind; updates are incremental, scoring reads them directly.

    A term's postings are grouped by (tf, document length): every document of a group
    gains the same score from the term, so the gain is computed once per group.
    """

    def __init__(self) -> None:
        self._docs: dict[str, IndexDoc] = {}
        # term -> (tf, length) -> documents (a dict used as an ordered set)
        self._postings: dict[str, dict[tuple[int, int], dict[str, None]]] = {}
        self._frequencies: dict[str, int] = {}
        # Per term, the highest tf and the shortest document ever indexed with it: they bound
        # what the term can add to any document (looser after removals, never wrong).
        self._extremes: dict[str, tuple[int, int]] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    def get(self, doc_id: str) -> IndexDoc | None:
        """The document with this id, if indexed."""
        return self._docs.get(doc_id)

    def docs(self) -> Iterator[IndexDoc]:
        """Every document, in no particular order (callers sort)."""
        return iter(self._docs.values())

    def add(self, doc: IndexDoc) -> None:
        """Index a document, replacing one with the same id."""
        doc_id = doc.doc_id
        if doc_id in self._docs:
            self.remove(doc_id)
        self._docs[doc_id] = doc
        length = len(doc.terms)
        self._total_length += length
        # Runs for every term of every document a load reads: locals, and no tuple rebuilt
        # unless an extreme moves.
        postings, frequencies, extremes = self._postings, self._frequencies, self._extremes
        for term, tf in doc.term_counts().items():
            groups = postings.get(term)
            if groups is None:
                postings[term] = {(tf, length): {doc_id: None}}
                frequencies[term] = 1
                extremes[term] = (tf, length)
                continue
            group = groups.get((tf, length))
            if group is None:
                groups[(tf, length)] = {doc_id: None}
            else:
                group[doc_id] = None
            frequencies[term] += 1
            top_tf, min_length = extremes[term]
            if tf > top_tf or length < min_length:
                extremes[term] = (max(top_tf, tf), min(min_length, length))

    def remove(self, doc_id: str) -> IndexDoc | None:
        """Drop a document and its postings; returns it, or None when it was not indexed."""
        doc = self._docs.pop(doc_id, None)
        if doc is None:
            return None
        length = len(doc.terms)
        self._total_length -= length
        for term, tf in doc.term_counts().items():
            groups = self._postings[term]
            group = groups[(tf, length)]
            del group[doc_id]
            if not group:
                del groups[(tf, length)]
            self._frequencies[term] -= 1
            if not groups:
                del self._postings[term], self._frequencies[term], self._extremes[term]
        return doc

    def score(
        self, terms: Iterable[str], useful_from: Callable[[dict[str, int]], int] | None = None
    ) -> dict[str, int]:
        """BM25 score in micro-units of the documents matching the terms.

        Without `useful_from`, every matching document is scored. With it, terms are read
        rarest first, and once the rest of the terms together cannot lift a document not
        yet seen to useful_from(scores so far), those terms only complete the documents
        already seen (max-score pruning). useful_from must return a score below which a
        document is of no use to the caller, and must grow with the scores it is given;
        the scores of useful documents are then exact.
        """
        count, total = len(self._docs), self._total_length
        if count == 0 or total == 0:
            return {}
        tf_weight, base, length_weight = 8 * total, 3 * total, 9 * count
        weighted = []
        for term in set(terms):
            if groups := self._postings.get(term):
                idf = idf_micros(count, self._frequencies[term])
                top_tf, min_length = self._extremes[term]
                bound = (
                    idf
                    * 20
                    * total
                    * top_tf
                    // (tf_weight * top_tf + base + length_weight * min_length)
                    + 1
                )
                weighted.append((idf, term, bound, groups))
        # Rarest first; the term breaks idf ties so the order never depends on set order.
        weighted.sort(key=lambda entry: (-entry[0], entry[1]))
        remaining_bound = sum(entry[2] for entry in weighted)
        scores: dict[str, int] = {}
        for idf, _, bound, groups in weighted:
            numerator = idf * 20 * total
            complete_only = (
                useful_from is not None and bool(scores) and remaining_bound <= useful_from(scores)
            )
            remaining_bound -= bound
            for (tf, length), doc_ids in groups.items():
                gain = numerator * tf // (tf_weight * tf + base + length_weight * length)
                if complete_only:
                    # No document unseen so far can become useful: only complete the seen ones
                    # (a C-level key intersection, larger view first: a common term's
                    # postings can hold every document of the user).
                    larger, smaller = (
                        (doc_ids, scores) if len(doc_ids) >= len(scores) else (scores, doc_ids)
                    )
                    for doc_id in larger.keys() & smaller.keys():
                        scores[doc_id] += gain
                elif not scores:
                    scores.update(dict.fromkeys(doc_ids, gain))
                else:
                    for doc_id in doc_ids:
                        scores[doc_id] = scores.get(doc_id, 0) + gain
        return scores
