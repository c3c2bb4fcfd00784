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
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memmesh.engines.retrieval_ranker.domain.bm25 import KindIndex
from memmesh.engines.retrieval_ranker.domain.dense import DEFAULT_DENSE_POLICY, fused_scores
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

    def useful_from(self, top_k: int | None) -> Callable[[dict[str, int]], int]:
        """The score below which a document can be neither a candidate nor, when top_k is
        given, among the top_k (scores only grow, so partial scores give a safe bound)."""

        def bound(scores: dict[str, int]) -> int:
            floor = max(
                self.min_relevance_micros, -(-max(scores.values()) * self.floor_percent // 100)
            )
            if top_k is not None and len(scores) >= top_k:
                return max(floor, heapq.nlargest(top_k, scores.values())[-1])
            return floor

        return bound


DEFAULT_POLICY = RankingPolicy()


def atom_order_key(doc: IndexDoc) -> tuple[int, int, int, int, int, str]:
    """Seed 001 §2.11.9: pinned, provenance, confidence, last use, use count, then id."""
    return doc.atom_order


def _scored(
    scores: dict[str, int], policy: RankingPolicy, top_k: int | None
) -> list[tuple[int, int, str]]:
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


def _atom_bands(
    index: KindIndex, scores: dict[str, int], policy: RankingPolicy, limit: int
) -> list[tuple[int, tuple[int, int, int, int, int, str], int, IndexDoc]]:
    """(tier, §2.11.9 order, score, doc) of the candidates in the bands that can fill the cap:
    stronger bands always go first, so weaker ones are never read."""
    if not scores:
        return []
    best = max(scores.values())
    lowest = policy.useful_from(None)(scores)
    descending = sorted((score for score in scores.values() if score >= lowest), reverse=True)
    if not descending:
        return []
    span, tiers = best * (100 - policy.floor_percent), policy.tier_count
    # Bands only widen as scores fall (policy.tier() inlined: this runs for every candidate),
    # so the band of the limit-th best candidate is the last one needed, and band <= last
    # is a score bound: (best - score) * 100 * tiers < (last + 1) * span.
    last = (
        min(tiers - 1, (best - descending[min(limit, len(descending)) - 1]) * 100 * tiers // span)
        if span
        else 0
    )
    keep_from = (
        lowest
        if not span or last == tiers - 1
        else max(lowest, best + 1 + (last + 1) * span // -(100 * tiers))
    )
    get = index.get
    if not span:
        return [
            (0, doc.atom_order, score, doc)
            for doc_id, score in scores.items()
            if score >= keep_from
            and (doc := get(doc_id)) is not None
            and not doc.signals.superseded
        ]
    # The order ends with the unique id, so these tuples compare on (tier, order) only.
    return [
        (min(tiers - 1, (best - score) * 100 * tiers // span), doc.atom_order, score, doc)
        for doc_id, score in scores.items()
        if score >= keep_from and (doc := get(doc_id)) is not None and not doc.signals.superseded
    ]


@dataclass(frozen=True)
class Related:
    """What dense retrieval adds to a kind's ranking: its related documents, closest first,
    and whether BM25 still counts (off only to measure dense retrieval alone)."""

    ranking: Sequence[tuple[str, int]]
    lexical: bool = True


def _relevance(
    index: KindIndex,
    terms: tuple[str, ...],
    policy: RankingPolicy,
    top_k: int | None,
    related: Related | None,
) -> dict[str, int]:
    """BM25 scores, or with `related` the reciprocal rank fusion of BM25's candidates
    (best first, ties by id) and the dense ranking."""
    if related is None:
        return index.score(terms, policy.useful_from(top_k))
    rankings = [related.ranking]
    if related.lexical:
        depth = DEFAULT_DENSE_POLICY.depth
        # Pruned to what can be among the best `depth`: the scores returned are exact.
        useful = policy.useful_from(depth)
        scores = index.score(terms, useful)
        # The depth best with every document tied with the last of them (a tie is one rank
        # in fused_scores), best first, ties by id.
        lowest = useful(scores) if scores else 0
        lexical = sorted((-score, doc_id) for doc_id, score in scores.items() if score >= lowest)
        rankings.insert(0, [(doc_id, -negated) for negated, doc_id in lexical])
    return fused_scores(rankings)


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
    if terms:
        ranked = _atom_bands(index, _relevance(index, terms, policy, None, related), policy, limit)
    else:
        ranked = [(0, doc.atom_order, 0, doc) for doc in index.docs() if not doc.signals.superseded]
    kept = heapq.nsmallest(limit, ranked)
    return tuple(
        Candidate(doc, score, tier)
        for tier, _, score, doc in sorted(kept, key=lambda entry: entry[1])
    )


def select_by_relevance(
    index: KindIndex,
    terms: tuple[str, ...],
    limit: int,
    policy: RankingPolicy = DEFAULT_POLICY,
    related: Related | None = None,
) -> tuple[Candidate, ...]:
    """Turn or digest candidates: relevance, then newer time, then id."""
    if limit <= 0:
        return ()
    if terms:
        # Only scores at least the limit-th best can be kept; ties on it are settled below,
        # and a tie can hold hundreds of equal turns: a Candidate is built for the kept only.
        scored = _scored(_relevance(index, terms, policy, limit, related), policy, limit)
        get = index.get
        ranked = [
            (-score, -doc.time_us, doc_id, tier, doc)
            for tier, score, doc_id in scored
            if (doc := get(doc_id)) is not None and not doc.signals.superseded
        ]
    else:
        ranked = [(0, -doc.time_us, doc.doc_id, 0, doc) for doc in index.docs()]
    # Relevance, then newer time, then id: the unique id ends every comparison.
    return tuple(
        Candidate(doc, -negated, tier)
        for negated, _, _, tier, doc in heapq.nsmallest(limit, ranked)
    )
