"""How relevance and the seed 001 §2.11.9 order combine (RANKING.md explains the choice).

1. Relevance decides what is a candidate: a score of at least min_relevance_micros and at
   least floor_percent of the best score of the same kind. The score is BM25's, or, with
   dense retrieval (dense.py), the reciprocal rank fusion of BM25's candidates and the
   documents related by meaning.
2. Candidates fall into tier_count equal relevance bands between the best score and the
   floor; band 0 is the strongest.
3. The cap keeps the candidates that come first by (band, §2.11.9 order): a weaker band
   never displaces a stronger one, and inside a band the §2.11.9 signals decide.
4. The atoms returned are listed in the §2.11.9 order exactly: pinned, provenance,
   confidence, last use, use count, then the lexicographic id.

Turns and digests have no ranking signals: relevance, then newer time, then id.
A generic query (no content terms) makes every atom a candidate in band 0, lists
digests newest first and returns no turns: recalling random history is a dump.

Scores, floor, bands and fusion are computed over arrays of slots (slots.py), and the cap's
sort reads the §2.11.9 signals from the slot columns: only the documents that come first
(with every one tied with the last of them) become Python tuples, sorted by the full order
with its id exactly as before. test_retrieval_ranker_selection.py checks this against the
rule read one document at a time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from memmesh.engines.retrieval_ranker.domain.bm25 import KindIndex
from memmesh.engines.retrieval_ranker.domain.dense import (
    DEFAULT_DENSE_POLICY,
    reciprocal_rank_gains,
)
from memmesh.engines.retrieval_ranker.domain.documents import Candidate, IndexDoc


@dataclass(frozen=True)
class RankingPolicy:
    """The relevance floor and bands; the defaults are the engine's contract (RANKING.md)."""

    # Any positive score: BM25's idf shrinks toward zero as a term's share of documents
    # grows, so in a small capsule where every atom names the topic asked about, a higher
    # absolute floor would drop exactly those atoms. The relative floor cuts the noise.
    min_relevance_micros: int = 1
    floor_percent: int = 25
    tier_count: int = 4

    def tier(self, score: int, best: int) -> int | None:
        """The relevance band of a score given the best of its kind, or None below the floor."""
        if score < self.min_relevance_micros or score * 100 < best * self.floor_percent:
            return None
        span = best * (100 - self.floor_percent)
        return (
            min(self.tier_count - 1, (best - score) * 100 * self.tier_count // span) if span else 0
        )

    def floor(self, best: int) -> int:
        """The lowest score that is a candidate given the best of its kind (tier() not None)."""
        return max(self.min_relevance_micros, -(-best * self.floor_percent // 100))

    def tiers(self, scores: NDArray[np.int64], best: int) -> NDArray[np.int64]:
        """tier() of scores at or above the floor."""
        span = best * (100 - self.floor_percent)
        if not span:
            return np.zeros(len(scores), dtype=np.int64)
        return np.minimum(self.tier_count - 1, (best - scores) * 100 * self.tier_count // span)


DEFAULT_POLICY = RankingPolicy()


def atom_order_key(doc: IndexDoc) -> tuple[int, int, int, int, int, str]:
    """Seed 001 §2.11.9: pinned, provenance, confidence, last use, use count, then id."""
    return doc.atom_order


@dataclass(frozen=True)
class Scored:
    """Documents of one kind with a relevance score: slots (slots.py) and their scores."""

    slots: NDArray[np.intp]
    scores: NDArray[np.int64]

    def at_least(self, lowest: int) -> Scored:
        """The documents scoring lowest or more."""
        kept = self.scores >= lowest
        return Scored(self.slots[kept], self.scores[kept])


@dataclass(frozen=True)
class Related:
    """What dense retrieval adds to a kind's ranking: its related documents as (slot,
    similarity), closest first (KindIndex.related), and whether BM25 still counts (off only
    to measure dense retrieval alone)."""

    found: Sequence[tuple[int, int]] | Callable[[], Sequence[tuple[int, int]]]
    lexical: bool = True

    @cached_property
    def ranking(self) -> Sequence[tuple[int, int]]:
        """The related documents; a callable `found` is called once, when they are first
        needed (after BM25's scoring, while the query's sentence vector is on its way)."""
        return self.found() if callable(self.found) else self.found


def _lexical(index: KindIndex, terms: tuple[str, ...], policy: RankingPolicy) -> Scored:
    """BM25's candidates: the documents scoring at least the floor of the best score (the
    floor is positive, so a document no term matches is never one)."""
    scores = index.score_slots(terms)
    best = int(scores.max()) if len(scores) else 0
    slots = np.flatnonzero(scores >= policy.floor(best))
    return Scored(slots, scores[slots])


def _best_with_ties(candidates: Scored, depth: int) -> Scored:
    """The `depth` best candidates, with every one tied with the last of them."""
    if len(candidates.slots) <= depth:
        return candidates
    return candidates.at_least(int(np.partition(candidates.scores, -depth)[-depth]))


def _union(first: NDArray[np.intp], second: NDArray[np.intp]) -> NDArray[np.intp]:
    """The slots in either, ascending (np.union1d, without its cost on short arrays)."""
    slots = np.sort(np.concatenate((first, second)))
    if len(slots) < 2:
        return slots
    return slots[np.concatenate(([True], slots[1:] != slots[:-1]))]


def _relevance(
    index: KindIndex, terms: tuple[str, ...], policy: RankingPolicy, related: Related | None
) -> Scored:
    """BM25's candidates, or with `related` the reciprocal rank fusion (dense.fused_scores)
    of BM25's best `depth` candidates (ties kept) and the dense ranking."""
    if related is None:
        return _lexical(index, terms, policy)
    # BM25 first: the dense ranking may wait for the query's sentence vector.
    lexical = (
        _best_with_ties(_lexical(index, terms, policy), DEFAULT_DENSE_POLICY.depth)
        if related.lexical
        else None
    )
    dense = Scored(
        np.array([slot for slot, _ in related.ranking], dtype=np.intp),
        np.array([similarity for _, similarity in related.ranking], dtype=np.int64),
    )
    fused = np.zeros(index.slots.size, dtype=np.int64)
    fused[dense.slots] += reciprocal_rank_gains(dense.scores)
    slots = dense.slots
    if lexical is not None:
        fused[lexical.slots] += reciprocal_rank_gains(lexical.scores)
        slots = _union(slots, lexical.slots)
    return Scored(slots, fused[slots])


def _candidates(
    relevant: Scored, policy: RankingPolicy
) -> tuple[NDArray[np.intp], NDArray[np.int64], NDArray[np.int64]]:
    """(slots, scores, tiers) of the candidates: at or above the floor of the best score."""
    if not len(relevant.slots):
        return relevant.slots, relevant.scores, relevant.scores
    best = int(relevant.scores.max())
    candidates = relevant.at_least(policy.floor(best))
    return candidates.slots, candidates.scores, policy.tiers(candidates.scores, best)


def _first_rows(keys: NDArray[np.int64], limit: int) -> NDArray[np.intp]:
    """Positions of the `limit` rows first by their keys (columns compared in order), and of
    every row tied with the last of them: whatever breaks the ties, the first `limit` by
    the full order are among these."""
    if len(keys) <= limit:
        return np.arange(len(keys))
    # Rows after the limit-th by the first key alone cannot come first: a cheap cut before
    # sorting by every key (many candidates often share a band or a score).
    leading = keys[:, 0]
    within = np.flatnonzero(leading <= np.partition(leading, limit - 1)[limit - 1])
    order = within[np.lexsort(keys[within].T[::-1])]
    last = keys[order[limit - 1]]
    tied = np.all(keys[order[limit:]] == last, axis=1)
    return order[: limit + (len(tied) if tied.all() else int(np.argmin(tied)))]


def select_atoms(
    index: KindIndex,
    terms: tuple[str, ...],
    limit: int,
    policy: RankingPolicy = DEFAULT_POLICY,
    related: Related | None = None,
) -> tuple[Candidate, ...]:
    """Atom candidates kept by the cap, listed in the seed 001 §2.11.9 order."""
    if limit <= 0:
        return ()
    table = index.slots
    if terms:
        slots, scores, tiers = _candidates(_relevance(index, terms, policy, related), policy)
    else:
        slots = table.held()
        scores = tiers = np.zeros(len(slots), dtype=np.int64)
    live = ~table.superseded[slots]
    slots, scores, tiers = slots[live], scores[live], tiers[live]
    first = _first_rows(np.column_stack((tiers, table.order[slots])), limit)
    # (tier, §2.11.9 order, score, slot): the order ends with the unique id, so these
    # tuples compare on (tier, order) only; documents are made for the kept ones alone.
    ranked = [
        (int(tiers[row]), table.atom_order(slot), int(scores[row]), slot)
        for row in first.tolist()
        for slot in (int(slots[row]),)
    ]
    kept = heapq.nsmallest(limit, ranked)
    return tuple(
        Candidate(table.doc(slot), score, tier)
        for tier, _, score, slot in sorted(kept, key=lambda entry: entry[1])
    )


# One ranked turn or digest: (negated score, negated time, id, tier, slot); tuples compare as
# the order (relevance, then newer time, then id).
Ranked = tuple[int, int, str, int, int]


def rank_by_relevance(
    index: KindIndex,
    terms: tuple[str, ...],
    limit: int,
    policy: RankingPolicy = DEFAULT_POLICY,
    related: Related | None = None,
) -> list[Ranked]:
    """The first `limit` turns or digests, in order, without making their documents."""
    if limit <= 0:
        return []
    table = index.slots
    if terms:
        slots, scores, tiers = _candidates(_relevance(index, terms, policy, related), policy)
        live = ~table.superseded[slots]
        slots, scores, tiers = slots[live], scores[live], tiers[live]
    else:
        slots = table.held()
        scores = tiers = np.zeros(len(slots), dtype=np.int64)
    first = _first_rows(np.column_stack((-scores, table.newest_first[slots])), limit)
    ranked = [
        (-int(scores[row]), int(table.newest_first[slot]), table.id_of(slot), int(tiers[row]), slot)
        for row in first.tolist()
        for slot in (int(slots[row]),)
    ]
    # Relevance, then newer time, then id: the unique id ends every comparison.
    return heapq.nsmallest(limit, ranked)


def candidates_of(index: KindIndex, ranked: Iterable[Ranked]) -> tuple[Candidate, ...]:
    """The candidates of ranked entries, their documents made from their slots."""
    table = index.slots
    return tuple(Candidate(table.doc(slot), -negated, tier) for negated, _, _, tier, slot in ranked)


def select_by_relevance(
    index: KindIndex,
    terms: tuple[str, ...],
    limit: int,
    policy: RankingPolicy = DEFAULT_POLICY,
    related: Related | None = None,
) -> tuple[Candidate, ...]:
    """Turn or digest candidates: relevance, then newer time, then id."""
    return candidates_of(index, rank_by_relevance(index, terms, limit, policy, related))
