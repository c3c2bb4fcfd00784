"""Which encoder finds LoCoMo's evidence turns by meaning alone
(`python -m memmesh.bench.encoder_recall [FILE]`).

Every turn "speaker: text" (a shared photo's caption appended, as `make eval-retrieval`
ingests it) is embedded by the full all-MiniLM-L6-v2 encoder and by the static table the
ranker uses; each question of categories 1-4 ranks its conversation's turns by cosine with
its own vector from the same encoder. Printed: evidence recall at 8, 20 and 50 turns, by
category. No BM25, no fusion: this compares the two vectors only.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from memmesh.bench.eval_retrieval import (
    CATEGORIES,
    DEFAULT_DATASET,
    evidence_of,
    sessions_of,
    turn_text,
)
from memmesh.embedding.encoder import default_encoder
from memmesh.embedding.static import default_static_encoder

DEPTHS = (8, 20, 50)


class TextEncoder(Protocol):
    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


def conversation_turns(conversation: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The dialogue ids and texts of every turn, session by session."""
    turns = [turn for _, _, session in sessions_of(conversation) for turn in session]
    return (
        [turn["dia_id"] for turn in turns],
        [f"{turn['speaker']}: {turn_text(turn)}" for turn in turns],
    )


def recall_by_encoder(samples: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Encoder name -> "recall@k cat c" -> mean evidence recall."""
    encoders: dict[str, TextEncoder] = {
        "full": default_encoder(),
        "static": default_static_encoder(),
    }
    recalls: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    for item in samples:
        ids, texts = conversation_turns(item["conversation"])
        matrices = {name: encoder.encode(texts) for name, encoder in encoders.items()}
        for qa in item["qa"]:
            evidence = evidence_of(qa)
            if qa.get("category") not in CATEGORIES or not evidence:
                continue
            for name, encoder in encoders.items():
                scores = matrices[name] @ encoder.encode([qa["question"]])[0]
                order = np.argsort(-scores, kind="stable")
                for depth in DEPTHS:
                    found = {ids[i] for i in order[:depth]}
                    recalls[(name, depth, qa["category"])].append(
                        len(evidence & found) / len(evidence)
                    )
    figures: dict[str, dict[str, float]] = defaultdict(dict)
    for (name, depth, category), values in sorted(recalls.items()):
        figures[name][f"recall@{depth} cat {category}"] = round(float(np.mean(values)), 3)
    return dict(figures)


def main() -> None:
    dataset = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATASET
    if not dataset.exists():
        raise SystemExit(f"{dataset} not found: run from the repository with ../shared beside it")
    figures = recall_by_encoder(json.loads(dataset.read_text()))
    for name, values in figures.items():
        for label, value in values.items():
            print(f"{name:7} {label:18} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
