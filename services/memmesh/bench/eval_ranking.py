"""Retrieval-quality harness: the engine's own scoring over plain documents, and its
evidence recall on LoCoMo (`python -m memmesh.bench.eval_ranking FILE`).

Measures:
- raw-turn recall@k: every turn "(session date) speaker: text" is a document, ranked by
  relevance alone (the reference BM25 figure is 0.684 at k = 20);
- the same with the engine's turn selection by BM25 alone, dense alone and fused, per
  split: dev (conversations 0-1, where the dense settings were chosen) and test (2-9);
- the selection study: the same turns treated as atoms with synthetic §2.11.9 signals,
  selected by several policies at the atom cap of 20, to show how much recall each way
  of combining relevance with the §2.11.9 order keeps.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memmesh.embedding.static import default_static_encoder
from memmesh.engines.retrieval_ranker.domain.bm25 import KindIndex
from memmesh.engines.retrieval_ranker.domain.dense import RetrievalMode
from memmesh.engines.retrieval_ranker.domain.documents import AtomSignals, IndexDoc, Kind
from memmesh.engines.retrieval_ranker.domain.ranking import (
    RankingPolicy,
    Related,
    select_atoms,
    select_by_relevance,
)
from memmesh.engines.retrieval_ranker.domain.text import Analyzer

ATOM_CAP = 20
CATEGORIES = (1, 2, 3, 4)
# Conversations the dense settings were chosen on; the others are the test split.
DEV_CONVERSATIONS = 2
_EVIDENCE_ID = re.compile(r"D\d+:\d+")

# Selection policies compared by the study; "engine" is the one Retrieve uses.
POLICIES = {
    "relevance_only": RankingPolicy(floor_percent=0, tier_count=1_000_000),
    "order_only": RankingPolicy(floor_percent=0, tier_count=1),
    "floor_then_order": RankingPolicy(tier_count=1),
    "engine": RankingPolicy(),
}


@dataclass(frozen=True)
class EvalDocument:
    """A plain document: id, text and time (microseconds, for the time tie-break)."""

    doc_id: str
    text: str
    time_us: int


class EvaluationIndex:
    """The engine's BM25 index over plain documents."""

    def __init__(
        self,
        documents: Iterable[EvalDocument],
        analyzer: Analyzer | None = None,
        signals: Callable[[str], AtomSignals] | None = None,
        vectors: Sequence[bytes] = (),
    ) -> None:
        self._analyzer = analyzer or Analyzer()
        self._index = KindIndex()
        for position, document in enumerate(documents):
            self._index.add(
                IndexDoc(
                    doc_id=document.doc_id,
                    kind=Kind.ATOM,
                    terms=tuple(self._analyzer.terms(document.text)),
                    time_us=document.time_us,
                    signals=signals(document.doc_id) if signals else AtomSignals(),
                    payload=b"",
                    vector=vectors[position] if vectors else b"",
                )
            )

    def rank(self, query: str, limit: int) -> list[str]:
        """Ids of the `limit` best matches: relevance, then newer time, then id (the turn order)."""
        scores = self._index.score(self._analyzer.query_terms(query))
        docs = [(score, self._index.get(doc_id)) for doc_id, score in scores.items()]
        ranked = sorted(
            (-score, -doc.time_us, doc.doc_id) for score, doc in docs if doc is not None
        )
        return [doc_id for _, _, doc_id in ranked[:limit]]

    def select_turns(self, query: str, limit: int, mode: RetrievalMode) -> list[str]:
        """Ids a turn retrieval in `mode` returns: relevance, then newer time, then id."""
        terms = self._analyzer.query_terms(query)
        related = None
        if mode is not RetrievalMode.BM25:
            ranking = self._index.related(self._analyzer.vector(query))
            related = Related(ranking, lexical=mode is RetrievalMode.FUSED)
        return [
            c.doc.doc_id for c in select_by_relevance(self._index, terms, limit, related=related)
        ]

    def select(self, query: str, limit: int, policy: RankingPolicy) -> list[str]:
        """Ids an atom retrieval under `policy` returns, in the seed 001 §2.11.9 order."""
        terms = self._analyzer.query_terms(query)
        return [c.doc.doc_id for c in select_atoms(self._index, terms, limit, policy)]


def rank_documents(documents: Sequence[EvalDocument], query: str, limit: int = 20) -> list[str]:
    """Ranked ids of documents for one query, with the engine's scoring."""
    return EvaluationIndex(documents).rank(query, limit)


def synthetic_signals(doc_id: str) -> AtomSignals:
    """Deterministic, relevance-blind §2.11.9 signals spread like a real capsule's."""
    h = hashlib.sha256(doc_id.encode()).digest()
    return AtomSignals(
        pinned=h[0] < 13,
        provenance=1 + h[1] % 4,
        confidence_bp=5000 + int.from_bytes(h[2:4], "big") % 5001,
        last_use_us=int.from_bytes(h[4:8], "big"),
        use_count=h[8] % 20,
    )


def _session_time_us(label: str) -> int:
    moment = datetime.strptime(label, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return int(moment.timestamp()) * 1_000_000


def locomo_documents(conversation: dict[str, object]) -> list[EvalDocument]:
    """Each turn as "(session date) speaker: text", timed by its session and position."""
    documents = []
    session = 1
    while f"session_{session}" in conversation:
        label = str(conversation[f"session_{session}_date_time"])
        start = _session_time_us(label)
        turns: list[dict[str, str]] = conversation[f"session_{session}"]  # type: ignore[assignment]  # JSON as read
        for position, turn in enumerate(turns):
            text = f"({label}) {turn['speaker']}: {turn['text']}"
            documents.append(EvalDocument(turn["dia_id"], text, start + position))
        session += 1
    return documents


def _recall(found: Iterable[str], evidence: set[str]) -> float:
    return len(evidence & set(found)) / len(evidence)


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 3)


def locomo_figures(path: Path, k: int = 20) -> dict[str, object]:
    """Evidence recall@k of raw-turn ranking, of each retrieval mode and of each selection
    policy, categories 1-4."""
    samples = json.loads(path.read_text())
    analyzer = Analyzer(default_static_encoder())
    raw: dict[int, list[float]] = defaultdict(list)
    selected: dict[str, list[float]] = defaultdict(list)
    # (mode, split) -> recalls; "all" and per category as well.
    by_mode: dict[tuple[str, str], list[float]] = defaultdict(list)
    for number, sample in enumerate(samples):
        split = "dev" if number < DEV_CONVERSATIONS else "test"
        documents = locomo_documents(sample["conversation"])
        vectors = [analyzer.vector(d.text) for d in documents]
        index = EvaluationIndex(documents, analyzer, synthetic_signals, vectors)
        for qa in sample["qa"]:
            evidence = set(_EVIDENCE_ID.findall(" ".join(qa.get("evidence", []))))
            if qa["category"] not in CATEGORIES or not evidence:
                continue
            raw[qa["category"]].append(_recall(index.rank(qa["question"], k), evidence))
            for mode in RetrievalMode:
                recall = _recall(index.select_turns(qa["question"], k, mode), evidence)
                for part in (split, f"cat{qa['category']}", "all"):
                    by_mode[(mode.value, part)].append(recall)
            for name, policy in POLICIES.items():
                selected[name].append(
                    _recall(index.select(qa["question"], ATOM_CAP, policy), evidence)
                )
    every = [value for values in raw.values() for value in values]
    return {
        "questions": len(every),
        f"raw_turn_recall_at_{k}": round(sum(every) / len(every), 3),
        "per_category": {str(c): round(sum(raw[c]) / len(raw[c]), 3) for c in sorted(raw)},
        f"atom_selection_recall_at_{ATOM_CAP}": {
            name: round(sum(values) / len(values), 3) for name, values in selected.items()
        },
        f"turn_selection_recall_at_{k}": {
            f"{mode}/{part}": _mean(values) for (mode, part), values in sorted(by_mode.items())
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the LoCoMo figures as one JSON line."""
    args = list(sys.argv[1:] if argv is None else argv)
    path = Path(args[0] if args else "../shared/datasets/locomo10.json")
    print(json.dumps(locomo_figures(path), sort_keys=True))


if __name__ == "__main__":
    main()
