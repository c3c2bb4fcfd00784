"""One user's in-memory index: an inverted index per document kind, and its checksum."""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memmesh.engines.retrieval_ranker.domain.bm25 import KindIndex
from memmesh.engines.retrieval_ranker.domain.dense import (
    DEFAULT_DENSE_POLICY,
    SENTENCE_DENSE_POLICY,
    QueryVectors,
    RetrievalMode,
)
from memmesh.engines.retrieval_ranker.domain.documents import (
    SENTENCE_KINDS,
    Candidate,
    Caps,
    IndexDoc,
    Kind,
    Retrieval,
)
from memmesh.engines.retrieval_ranker.domain.ranking import (
    Related,
    candidates_of,
    rank_by_relevance,
    select_atoms,
    select_by_relevance,
)

# Standing constraints pushed into one retrieval at most (the first in §2.11.9 order).
MAX_STANDING = 8
# Memory a document takes in an index besides its payload and its dense row, with CPython
# 3.11: its id and its entries in the id map and the id list, and per index term its bytes
# in the slot's record and a packed posting (a term only this document holds costs its
# entry in the postings map too; term strings are interned, shared by every document). Set
# from resident memory in use, not from the objects alone (RANKING.md): on documents shaped
# like make soak's (3 terms, 300 users of 100) the estimate is 20 % over, on documents of 3
# and 12 terms drawn from 3,000 words (most of them held by one document of a user) 11 % and
# 3 % over, so a cache bounded by it stays inside its process's memory. The static
# embedding table (12 MB, memory-mapped and shared) is the process's, not a user's.
DOC_BYTES = 540
TERM_BYTES = 50
# Counted, not measured: a document's slot columns (slots.py: eight int64, two int32, a
# flag, a kind).
SLOT_BYTES = 74
# A turn a digest cites: its entries in the citation maps both ways (ids are interned, the
# turn's id shared with its own document); about 85 bytes measured with tracemalloc.
CITE_BYTES = 100
# A name a turn addresses someone by: its entries in the map of the turn's names and its
# share of the name's count (counted like a citation).
ADDRESS_BYTES = 100
# A name addressed in this many turns is whom the conversations are with (the user, the
# assistant, the friend talked to), not what they are about; fewer may be a place after a
# comma (", Sweden.").
MIN_ADDRESSED_TURNS = 3
# A digest returned because it cites a turn found, not for its own words: the last band.
CITING_TIER = 3
# The turns found whose ranks count toward the digests citing them (ranking.py's depth).
EVIDENCE_TURNS = 50
# A query scored by its terms alone.
NO_VECTORS = QueryVectors()


def document_bytes(doc: IndexDoc) -> int:
    """Approximate memory of a document in the index, dense row excluded (DenseIndex.nbytes)."""
    texts = len(doc.payload) + len(doc.constraint_text)
    return (
        DOC_BYTES
        + SLOT_BYTES
        + texts
        + TERM_BYTES * len(doc.terms)
        + CITE_BYTES * len(doc.cites)
        + ADDRESS_BYTES * len(doc.addressed)
    )


class UserIndex:
    """Documents of one (tenant, user); `generation` is the store generation it reflects."""

    def __init__(self, generation: int = 0, docs: Iterable[IndexDoc] = ()) -> None:
        self.generation = generation
        self._kinds = {kind: KindIndex() for kind in Kind}
        # Ids of the standing-constraint atoms, kept beside the index so a retrieval finds
        # them without a scan (the documents themselves are the atom index's).
        self._standing: set[str] = set()
        # A turn's id -> the digests citing it, and a digest's id -> the turns it cites: a
        # digest is ranked on its whole summary, a turn on its own words, so the digest that
        # quotes a turn found is brought along with it (retrieve).
        self._citing: dict[str, tuple[str, ...]] = {}
        self._cites: dict[str, tuple[str, ...]] = {}
        # A turn's id -> the names it addresses someone by, and each name's count of turns:
        # the names the user's conversations are between (addressee_names).
        self._addresses: dict[str, tuple[str, ...]] = {}
        self._addressed: Counter[str] = Counter()
        self._document_bytes = 0
        # A whole index read at once (a load, a rebuild): the last document of an id counts,
        # as if each were upserted in turn, and every kind's vectors go in with one copy.
        by_kind: dict[Kind, list[IndexDoc]] = {kind: [] for kind in Kind}
        for doc in {doc.doc_id: doc for doc in docs}.values():
            self._count_in(doc)
            by_kind[doc.kind].append(doc)
        for kind in Kind:
            self._kinds[kind].extend(by_kind[kind])

    def _find(self, doc_id: str) -> KindIndex | None:
        return next((index for index in self._kinds.values() if doc_id in index), None)

    def _count_in(self, doc: IndexDoc) -> None:
        """A document going into the index, counted in its bytes (its vector in its kind's
        dense rows) and, when it is a standing constraint still in force, kept as one."""
        self._document_bytes += document_bytes(doc)
        if doc.constraint_text and doc.kind is Kind.ATOM and not doc.signals.superseded:
            self._standing.add(doc.doc_id)
        if doc.cites and doc.kind is Kind.DIGEST:
            self._cites[doc.doc_id] = doc.cites
            for turn_id in doc.cites:
                self._citing[turn_id] = (*self._citing.get(turn_id, ()), doc.doc_id)
        if doc.addressed and doc.kind is Kind.TURN:
            self._addresses[doc.doc_id] = doc.addressed
            self._addressed.update(doc.addressed)

    def _uncite(self, digest_id: str) -> int:
        """Drop a digest from the citation maps; the bytes its citations were counted in."""
        cites = self._cites.pop(digest_id, ())
        for turn_id in cites:
            others = tuple(d for d in self._citing.get(turn_id, ()) if d != digest_id)
            if others:
                self._citing[turn_id] = others
            else:
                self._citing.pop(turn_id, None)
        return CITE_BYTES * len(cites)

    def _unaddress(self, turn_id: str) -> int:
        """Drop a turn's names from their counts; the bytes they were counted in."""
        names = self._addresses.pop(turn_id, ())
        self._addressed.subtract(names)
        for name in names:
            if self._addressed[name] <= 0:
                del self._addressed[name]
        return ADDRESS_BYTES * len(names)

    def addressee_names(self) -> frozenset[str]:
        """The names (index terms) the user's turns address someone by in at least
        MIN_ADDRESSED_TURNS turns: who the conversations are between."""
        return frozenset(
            name for name, turns in self._addressed.items() if turns >= MIN_ADDRESSED_TURNS
        )

    def upsert(self, doc: IndexDoc) -> None:
        """Index a document; an id is unique across kinds, so a same-id document of another kind goes."""
        self.remove(doc.doc_id)
        self._count_in(doc)
        self._kinds[doc.kind].add(doc)

    def remove(self, doc_id: str) -> bool:
        """Drop a document; True when it was indexed."""
        self._standing.discard(doc_id)
        holder = self._find(doc_id)
        if holder is None:
            return False
        removed = holder.remove(doc_id)
        # A document made again from its slot comes without its citations and names: counted
        # apart.
        self._document_bytes -= (
            document_bytes(removed) + self._uncite(doc_id) + self._unaddress(doc_id)
            if removed
            else 0
        )
        return removed is not None

    def standing_constraints(self) -> tuple[IndexDoc, ...]:
        """The user's standing constraints, at most MAX_STANDING, in §2.11.9 order."""
        if not self._standing:
            return ()
        # Ordered by their slot columns; only the documents returned are made again.
        table = self._kinds[Kind.ATOM].slots
        held = [slot for doc_id in self._standing if (slot := table.slot_of(doc_id)) is not None]
        first = sorted(held, key=table.atom_order)[:MAX_STANDING]
        return tuple(table.doc(slot) for slot in first)

    def count(self, kind: Kind | None = None) -> int:
        """Documents of a kind, or of every kind."""
        if kind is not None:
            return len(self._kinds[kind])
        return sum(len(index) for index in self._kinds.values())

    def dense_bytes(self) -> int:
        """Bytes held by the dense vectors of every kind."""
        return sum(index.dense.nbytes for index in self._kinds.values())

    def approximate_bytes(self) -> int:
        """Approximate memory of the whole index: documents, postings (with the arrays of
        the terms read) and dense vectors."""
        arrays = sum(index.array_bytes for index in self._kinds.values())
        return self._document_bytes + arrays + self.dense_bytes()

    def _related(
        self,
        kind: Kind,
        query_terms: tuple[str, ...],
        query_vectors: QueryVectors,
        mode: RetrievalMode,
    ) -> Related | None:
        # A generic query (no content terms) keeps its own rule (ranking.py); so does BM25 mode.
        if not query_terms or mode is RetrievalMode.BM25:
            return None
        index = self._kinds[kind]

        def ranking() -> Sequence[tuple[int, int]]:
            # Called once BM25 has scored the kind: the sentence vector may be on its way.
            sentence = query_vectors.sentence_vector() if kind in SENTENCE_KINDS else b""
            if sentence:
                return index.related(sentence, SENTENCE_DENSE_POLICY)
            return index.related(query_vectors.words)

        return Related(ranking, mode is RetrievalMode.FUSED)

    def retrieve(
        self,
        query_terms: tuple[str, ...],
        caps: Caps,
        standing: Iterable[IndexDoc] = (),
        query_vectors: QueryVectors = NO_VECTORS,
        mode: RetrievalMode = RetrievalMode.BM25,
    ) -> Retrieval:
        """Candidates for the query terms (and, unless `mode` is BM25, the query's dense
        vectors) within caps (see ranking.py for the rule), and the `standing` constraints the
        caller decided the query could touch."""
        atoms, turns, digests = (self._kinds[kind] for kind in (Kind.ATOM, Kind.TURN, Kind.DIGEST))
        # Deeper than the turns returned only when a digest cites a turn; documents are made
        # for the turns returned alone, the rest count by their ids.
        depth = max(caps.max_turns, EVIDENCE_TURNS) if self._citing else caps.max_turns
        # The turns last: their sentence vector may still be on its way (QueryVectors.pending).
        found_digests = select_by_relevance(
            digests,
            query_terms,
            caps.max_digests,
            related=self._related(Kind.DIGEST, query_terms, query_vectors, mode),
        )
        found_atoms = select_atoms(
            atoms,
            query_terms,
            caps.max_atoms,
            related=self._related(Kind.ATOM, query_terms, query_vectors, mode),
        )
        ranked_turns = (
            rank_by_relevance(
                turns,
                query_terms,
                depth,
                related=self._related(Kind.TURN, query_terms, query_vectors, mode),
            )
            if query_terms
            else []
        )
        return Retrieval(
            atoms=found_atoms,
            turns=candidates_of(turns, ranked_turns[: caps.max_turns]),
            digests=self._by_evidence(
                found_digests, [turn_id for _, _, turn_id, _, _ in ranked_turns], caps.max_digests
            ),
            generic_query=not query_terms,
            standing=tuple(Candidate(doc, 0, 0) for doc in standing),
        )

    def _by_evidence(
        self, digests: tuple[Candidate, ...], turn_ids: list[str], limit: int
    ) -> tuple[Candidate, ...]:
        """The digests found and those citing a turn found, by their fused score: a digest's
        own rank among the digests found and the ranks of the turns found that it cites, each
        adding RRF_SCALE // (RRF_K + rank) (a digest is ranked on its whole summary, a turn on
        its own words, so the digest quoting turns found holds what they said); then newer
        time, then id; at most `limit`."""
        if not turn_ids:
            return digests
        scale, k = DEFAULT_DENSE_POLICY.rrf_scale, DEFAULT_DENSE_POLICY.rrf_k
        scores = {d.doc.doc_id: scale // (k + rank) for rank, d in enumerate(digests, start=1)}
        for rank, turn_id in enumerate(turn_ids, start=1):
            for digest_id in self._citing.get(turn_id, ()):
                scores[digest_id] = scores.get(digest_id, 0) + scale // (k + rank)
        found = {d.doc.doc_id: d for d in digests}
        table = self._kinds[Kind.DIGEST].slots
        ranked = []
        for digest_id, score in scores.items():
            slot = table.slot_of(digest_id)
            if slot is None or table.superseded[slot]:
                continue
            ranked.append((-score, int(table.newest_first[slot]), digest_id, slot))
        chosen = heapq.nsmallest(limit, ranked)
        return tuple(
            Candidate(
                found[digest_id].doc if digest_id in found else table.doc(slot),
                -negated,
                found[digest_id].tier if digest_id in found else CITING_TIER,
            )
            for negated, _, digest_id, slot in chosen
        )

    def checksum(self) -> str:
        """SHA-256 hex over every document's id, kind, payload, term counts and dense vector
        (when it has one), in id order."""
        digest = hashlib.sha256()
        docs = sorted(
            (doc for index in self._kinds.values() for doc in index.docs()), key=lambda d: d.doc_id
        )
        for doc in docs:
            terms = ",".join(f"{term}={count}" for term, count in sorted(doc.term_counts().items()))
            digest.update(f"{doc.doc_id}\x1f{doc.kind.value}\x1f{terms}\x1f".encode())
            digest.update(hashlib.sha256(doc.payload).digest())
            if vector := self._kinds[doc.kind].vector_of(doc.doc_id):
                digest.update(hashlib.sha256(vector).digest())
        return digest.hexdigest()


@dataclass(frozen=True)
class IndexSummary:
    """Counts and checksum of a user's index."""

    counts: dict[Kind, int]
    checksum: str

    @property
    def document_count(self) -> int:
        return sum(self.counts.values())


def summary_of(index: UserIndex) -> IndexSummary:
    """The index's counts per kind and its checksum."""
    return IndexSummary({kind: index.count(kind) for kind in Kind}, index.checksum())
