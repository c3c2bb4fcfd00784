"""Dense retrieval beside BM25: quantised text vectors, a nearest-neighbour index per kind, and
reciprocal rank fusion of the two rankings (RANKING.md gives the figures behind the numbers).

Vectors are unit vectors quantised to int8 (x 127) and kept as int8: a scan reads a quarter
of what float32 rows would (a kind of 10,000 documents is 1.9 MB at 192 dimensions), and the
scan is memory-bound once other work has evicted the matrix from the cache. Every dot product
is an exact integer summed in int32, so the score of a document never depends on summation
order: equal inputs, equal outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

VECTOR_SCALE = 127
# A dot product of two quantised unit vectors is cosine x UNIT.
UNIT = VECTOR_SCALE * VECTOR_SCALE
# Rows a matrix starts with and adds at least when it grows: most users hold few
# documents of a kind, and every cached user's spare rows are memory held.
GROWTH_ROWS = 16


def quantised(vector: NDArray[np.float32]) -> bytes:
    """A unit vector as int8 bytes (x VECTOR_SCALE); a zero vector (no content) is b''."""
    if not np.any(vector):
        return b""
    return (
        np.rint(vector * VECTOR_SCALE).clip(-VECTOR_SCALE, VECTOR_SCALE).astype(np.int8).tobytes()
    )


def _int8_dots(matrix: NDArray[np.int8], query: NDArray[np.int8], out: NDArray[np.int32]) -> None:
    """out[i] = matrix[i] . query, exactly (|products| <= 127², so int16 products, int32 sums)."""
    wide = query.astype(np.int16)
    for row in range(matrix.shape[0]):
        total = np.int32(0)
        values = matrix[row]
        for column in range(matrix.shape[1]):
            total += np.int16(values[column]) * wide[column]
        out[row] = total


# numpy has no int8 matrix-vector product (its integer matmul is a plain loop, slower than
# float32 BLAS); compiled once with its signature and cached beside this module, the loop
# above reads the int8 rows as they are, about three times faster than float32 BLAS over
# rows that are not in the cache.
int8_dots: Callable[[NDArray[np.int8], NDArray[np.int8], NDArray[np.int32]], None] = numba.njit(
    "void(int8[:, ::1], int8[::1], int32[::1])", cache=True, nogil=True
)(_int8_dots)


def warm_dense_scan() -> None:
    """Run the compiled scan once: its first call loads the machine code (about 10 ms),
    which belongs to start-up, not to the first Brief."""
    int8_dots(
        np.zeros((1, 1), dtype=np.int8), np.zeros(1, dtype=np.int8), np.zeros(1, dtype=np.int32)
    )


class QueryVectors(NamedTuple):
    """A query's vectors: by the static table (`words`) and by the sentence encoder
    (`sentence`, b'' without the encoder, when the static one serves every kind), each
    scanned against the kinds whose documents the same encoder embedded."""

    words: bytes = b""
    sentence: bytes = b""
    # The sentence vector while a worker thread still computes it (the encoder lets go of
    # the interpreter as it runs): the query's other scoring goes on meanwhile.
    pending: Future[bytes] | None = None

    def sentence_vector(self) -> bytes:
        """The sentence vector, waiting for it if it is still being computed."""
        return self.pending.result() if self.pending is not None else self.sentence


class RetrievalMode(StrEnum):
    """What ranks: BM25 and dense fused (the engine's), or either alone (to measure them)."""

    FUSED = "fused"
    BM25 = "bm25"
    DENSE = "dense"


@dataclass(frozen=True)
class DensePolicy:
    """Which nearest neighbours count as related, and how rankings are fused."""

    # Cosine from which a document can be related at all (in the centred static space
    # unrelated short texts score about -0.1 to 0.2)...
    min_cosine_percent: int = 15
    # ...and within this share of the best neighbour's cosine: a query with one close
    # memory does not also pull every loosely related one.
    relative_percent: int = 75
    # Neighbours read from each kind.
    depth: int = 50
    # Reciprocal rank fusion: a document's fused score is the sum over the rankings it is in
    # of RRF_SCALE // (RRF_K + rank), rank from 1; RRF_K = 60 as in Cormack et al. (2009).
    rrf_k: int = 60

    @property
    def rrf_scale(self) -> int:
        """Makes the first rank of one ranking worth one million micro-units."""
        return 1_000_000 * (self.rrf_k + 1)


DEFAULT_DENSE_POLICY = DensePolicy()
# The sentence encoder's cosines between a request and the facts it is about sit closer to
# its cosines with loosely related ones than the static table's ("what does my future wife
# do for work": the fiancée 0.24, the user's own job as a nurse 0.35), so the kinds it embeds
# keep the documents within 65 % of the best (RANKING.md).
SENTENCE_DENSE_POLICY = DensePolicy(relative_percent=65)


class DenseIndex:
    """Quantised vectors of one document kind, the row of each its document's slot
    (slots.py): no id maps of its own. A slot without a vector has a zero row, which is
    never related (the cosine floor is positive)."""

    def __init__(self) -> None:
        self._matrix = np.zeros((0, 0), dtype=np.int8)
        # Rows up to the highest slot given a vector: what a scan reads.
        self._size = 0
        self._count = 0

    def __len__(self) -> int:
        """Rows holding a vector."""
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held by the matrix (capacity included)."""
        return int(self._matrix.nbytes)

    def add(self, slot: int, vector: bytes) -> None:
        """Set a slot's vector (replacing its previous one); b'' clears it."""
        self.extend([(slot, vector)])

    def extend(self, rows: Sequence[tuple[int, bytes]]) -> None:
        """add() each (slot, vector), with the matrix grown once for all of them."""
        kept = [(slot, vector) for slot, vector in rows if vector]
        dimensions = {len(vector) for _, vector in kept}
        width = self._matrix.shape[1] if self._count else max(dimensions, default=0)
        if dimensions - {width}:
            raise ValueError(
                f"vectors of {sorted(dimensions - {width})} dimensions in an index of {width}"
            )
        for slot, vector in rows:
            if not vector:
                self.remove(slot)
        if not kept:
            return
        end = max(slot for slot, _ in kept) + 1
        if self._matrix.shape[1] != width or end > len(self._matrix):
            # A quarter as many again each time (amortised constant cost per row, and little
            # spare: every cached user's spare rows are memory held, RANKING.md); the spare
            # rows count toward the cache's bytes. A first fill takes what it needs (at least
            # GROWTH_ROWS).
            held = len(self._matrix) if self._matrix.shape[1] == width else 0
            grown = np.zeros((max(end, held * 5 // 4 + GROWTH_ROWS), width), dtype=np.int8)
            if held:
                grown[:held] = self._matrix[:held]
            self._matrix = grown
        for slot, vector in kept:
            row = self._matrix[slot]
            self._count += not row.any()
            row[:] = np.frombuffer(vector, dtype=np.int8)
        self._size = max(self._size, end)

    def vector_of(self, slot: int) -> bytes:
        """A slot's vector as added (b'' for none)."""
        if slot >= self._size or not self._matrix[slot].any():
            return b""
        return bytes(self._matrix[slot].tobytes())

    def remove(self, slot: int) -> None:
        """Clear a slot's vector, if it has one."""
        if slot < self._size and self._matrix[slot].any():
            self._matrix[slot] = 0
            self._count -= 1

    def related(
        self,
        query: bytes,
        policy: DensePolicy = DEFAULT_DENSE_POLICY,
        excluded: NDArray[np.bool_] | None = None,
    ) -> list[tuple[int, int]]:
        """(slot, similarity) of the related documents, closest first (ties by slot), at
        most policy.depth of them plus those tied with the last; a slot `excluded` marks
        (indexed by slot) is never one."""
        count = self._size
        if not query or not self._count or self._matrix.shape[1] != len(query):
            return []
        dots = np.empty(count, dtype=np.int32)
        int8_dots(self._matrix[:count], np.frombuffer(query, dtype=np.int8).copy(), dots)
        if excluded is not None:
            dots[excluded[:count]] = np.iinfo(np.int32).min
        best = int(dots.max())
        floor = max(policy.min_cosine_percent * UNIT / 100, best * policy.relative_percent / 100)
        rows = np.flatnonzero(dots >= floor)
        if len(rows) > policy.depth:
            # Only the depth-th best and above are kept, with every document tied with it
            # (the depth best are above the floor, so it is the depth-th of these rows).
            above = dots[rows]
            rows = rows[above >= np.partition(above, -policy.depth)[-policy.depth]]
        # Ascending rows, so a stable sort by similarity leaves ties by slot.
        ranked = rows[np.argsort(-dots[rows].astype(np.int64), kind="stable")]
        return list(zip(ranked.tolist(), dots[ranked].tolist(), strict=True))


def fused_scores(
    rankings: Sequence[Sequence[tuple[str, int]]], policy: DensePolicy = DEFAULT_DENSE_POLICY
) -> dict[str, int]:
    """Reciprocal rank fusion of rankings of (id, score), best first, into integer scores.
    Equal scores share a rank (the first of them), so documents a ranking cannot tell apart
    stay equally relevant and the §2.11.9 order decides between them."""
    scale, k = policy.rrf_scale, policy.rrf_k
    fused: dict[str, int] = {}
    for ranking in rankings:
        rank, previous = 0, None
        for position, (doc_id, score) in enumerate(ranking, start=1):
            if score != previous:
                rank, previous = position, score
            fused[doc_id] = fused.get(doc_id, 0) + scale // (k + rank)
    return fused


def reciprocal_rank_gains(
    scores: NDArray[np.int64], policy: DensePolicy = DEFAULT_DENSE_POLICY
) -> NDArray[np.int64]:
    """What fused_scores adds for each document of one ranking, given the ranking's scores in
    any order: a document's rank is one more than the number of higher scores, so equal
    scores share a rank as there."""
    higher = len(scores) - np.searchsorted(np.sort(scores), scores, side="right")
    return policy.rrf_scale // (policy.rrf_k + 1 + higher)
