"""How relevance and the seed 001 §2.11.9 order combine (RANKING.md explains the choice).

1. Relevance decides what is a candidate: a BM25 score of at least min_relevance_micros
   and at least floor_percent of the best score of the same kind.
2. Candidates fall into tier_count equal relevance bands between the best score and the
   floor; band 0 is the strongest.
3. The cap keeps the candidates that come first by (band, §2.11.9 order): a weaker band
   never displaces a stronger one, and inside a band the §2.11.9 signals decide.
4. The atoms returned are listed in the §2.11.9 order exactly: pinned, provenance,
   confidence, last use, use count, then the lexicographic id.

Turns and digests have no ranking signals: relevance, then newer time, then id.
A generic query (no content terms) makes every atom a candidate in band 0, lists
digests newest first and returns no turns: recalling random history is a dump.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memmesh.engines.retrieval_ranker.bm25 import KindIndex
from memmesh.engines.retrieval_ranker.documents import Candidate, IndexDoc


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
        return min(self.tier_count - 1, (best - score) * 100 * self.tier_count // span) if span else 0


    def useful_from(self, top_k: int | None) -> Callable[[dict[str, int]], int]:
        """The score below which a document can be neither a candidate nor, when top_k is
        given, among the top_k (scores only grow, so partial scores give a safe bound)."""

        def bound(scores: dict[str, int]) -> int:
            floor = max(self.min_relevance_micros, -(-max(scores.values()) * self.floor_percent // 100))
            if top_k is not None and len(scores) >= top_k:
                return max(floor, heapq.nlargest(top_k, scores.values())[-1])
            return floor

        return bound


DEFAULT_POLICY = RankingPolicy()


def atom_order_key(doc: IndexDoc) -> tuple[int, int, int, int, int, str]:
    """Seed 001 §2.11.9: pinned, provenance, confidence, last use, use count, then id."""
    s = doc.signals
    return (-int(s.pinned), -s.provenance, -s.confidence_bp, -s.last_use_us, -s.use_count, doc.doc_id)


def _relevance_order_key(candidate: Candidate) -> tuple[int, int, str]:
    return (-candidate.relevance_micros, -candidate.doc.time_us, candidate.doc.doc_id)


def _scored(scores: dict[str, int], policy: RankingPolicy, top_k: int | None) -> list[tuple[int, int, str]]:
    """(tier, score, id) of the candidates (of those that can be in the top_k, when given)."""
    if not scores:
        return []
    best = max(scores.values())
    lowest = policy.useful_from(None)(scores)
    if top_k is not None:
        lowest = max(lowest, heapq.nlargest(top_k, scores.values())[-1])
    span, tiers = best * (100 - policy.floor_percent), policy.tier_count
    if not span:
        return [(0, score, doc_id) for doc_id, score in scores.items() if score >= lowest]
    # policy.tier() inlined: this runs for every matching document.
    return [
        (min(tiers - 1, (best - score) * 100 * tiers // span), score, doc_id)
        for doc_id, score in scores.items()
        if score >= lowest
    ]


def _build(index: KindIndex, scored: Iterable[tuple[int, int, str]]) -> list[Candidate]:
    return [
        Candidate(doc, score, tier)
        for tier, score, doc_id in scored
        if (doc := index.get(doc_id)) is not None and not doc.signals.superseded
    ]


def select_atoms(
    index: KindIndex, terms: tuple[str, ...], limit: int, policy: RankingPolicy = DEFAULT_POLICY
) -> tuple[Candidate, ...]:
    """Atom candidates kept by the cap, listed in the seed 001 §2.11.9 order."""
    if limit <= 0:
        return ()
    if terms:
        scored = _scored(index.score(terms, policy.useful_from(None)), policy, None)
        # Only the bands that can fill the cap matter: stronger bands always go first.
        per_tier = Counter(tier for tier, _, _ in scored)
        last_tier, taken = 0, 0
        for last_tier in sorted(per_tier):
            taken += per_tier[last_tier]
            if taken >= limit:
                break
        candidates: Iterable[Candidate] = _build(index, (c for c in scored if c[0] <= last_tier))
    else:
        candidates = (Candidate(doc, 0, 0) for doc in index.docs() if not doc.signals.superseded)
    kept = heapq.nsmallest(limit, candidates, key=lambda c: (c.tier, atom_order_key(c.doc)))
    return tuple(sorted(kept, key=lambda c: atom_order_key(c.doc)))


def select_by_relevance(
    index: KindIndex, terms: tuple[str, ...], limit: int, policy: RankingPolicy = DEFAULT_POLICY
) -> tuple[Candidate, ...]:
    """Turn or digest candidates: relevance, then newer time, then id."""
    if limit <= 0:
        return ()
    if terms:
        # Only scores at least the limit-th best can be kept; ties on it are settled below.
        scored = _scored(index.score(terms, policy.useful_from(limit)), policy, limit)
        candidates: Iterable[Candidate] = _build(index, scored)
    else:
        candidates = (Candidate(doc, 0, 0) for doc in index.docs())
    return tuple(heapq.nsmallest(limit, candidates, key=_relevance_order_key))
