"""k-fold cross-validation of the hybrid extractor on the development split only.

usage: python -m memmesh.bench.cv_extraction [--folds K] [--readers DIR]
Folds are by id hash (`int(sha256(id), 16) % K`); each fold is scored with the shared scorer
by the shipped design trained on the other folds: the clause heads (embedding and lexical,
averaged), the command reader (tuned also on the first four command probe rounds; PyTorch,
a few minutes a fold; with --readers the fold readers are kept in DIR and reused while their
turns are the same) and the correction model, with the shipped thresholds and margin. The mean of the
folds' figures is printed as JSON. The test split is never read.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memmesh.bench.eval_extraction import FIGURES, SPLITS, score_file
from memmesh.embedding.weights import load_tokenizer, load_weights, model_directory
from memmesh.extraction.learned.command_reader import CommandReader, turns_fingerprint
from memmesh.extraction.learned.commands import LabelledTurn, LearnedCommands
from memmesh.extraction.learned.extractor import HybridExtractor
from memmesh.extraction.learned.lexical import ClauseHeads
from memmesh.extraction.learned.train import (
    COMMAND_PROBE_ROUNDS,
    command_training_turns,
    train_clause_head,
    train_corrections,
)
from memmesh.extraction.learned.tune_commands import tune
from memmesh.extraction.learned.units import TextEncoder

DEV_SPLIT = SPLITS[0]


class MemoEncoder:
    """An encoder that computes each distinct text once across all folds (same vectors)."""

    def __init__(self, encoder: TextEncoder) -> None:
        self._encoder = encoder
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def dimension(self) -> int:
        return self._encoder.dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self._encoder.encode(missing), strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def clear_cache(self) -> None:
        self._vectors.clear()


def fold_of(case_id: str, folds: int) -> int:
    """The fold a case belongs to."""
    return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % folds


def fold_reader(turns: Sequence[LabelledTurn], readers: Path | None, fold: int) -> CommandReader:
    """The command reader tuned on a fold's training turns, kept in `readers` (when given) and
    taken from there while the turns are the same: tuning takes minutes a fold."""
    path = readers / f"reader-{fold}.npz" if readers is not None else None
    fingerprint = turns_fingerprint([(t.text, t.label) for t in turns])
    if path is not None and path.is_file():
        kept = CommandReader.load(path)
        if kept.fingerprint == fingerprint:
            return kept
    directory = model_directory()
    reader = tune(turns, load_weights(directory), load_tokenizer(directory))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        reader.save(path)
    return reader


def cross_validate(
    cases: list[dict[str, Any]],
    encoder: TextEncoder,
    folds: int = 5,
    readers: Path | None = None,
) -> dict[str, float]:
    """Mean figures over the folds, each scored by heads trained on the others."""
    per_fold: dict[str, list[float]] = {name: [] for name in FIGURES}
    for fold in range(folds):
        with tempfile.TemporaryDirectory() as workdir:
            train_path, held_path = Path(workdir, "train.jsonl"), Path(workdir, "held.jsonl")
            for path, keep in ((train_path, False), (held_path, True)):
                path.write_text(
                    "".join(
                        json.dumps(c) + "\n"
                        for c in cases
                        if (fold_of(c["id"], folds) == fold) == keep
                    ),
                    encoding="utf-8",
                )
            clause = train_clause_head([train_path], encoder)
            turns = command_training_turns([train_path], COMMAND_PROBE_ROUNDS)
            reader = fold_reader(turns, readers, fold)
            commands = LearnedCommands(
                encoder,
                reader.head,
                corrections=train_corrections([train_path]),
                reader=reader.encoder(),
            )
            head = ClauseHeads((clause.head, clause.hidden_layer_head), clause.lexical_head)
            extractor = HybridExtractor(encoder, head, commands=commands)
            summary, _ = score_file(held_path, extractor.extract, [])
        for name in FIGURES:
            value = summary.get(name)
            if isinstance(value, float | int):
                per_fold[name].append(float(value))
    return {name: round(float(np.mean(v)), 3) for name, v in per_fold.items() if v}


def main(argv: list[str]) -> int:
    """Cross-validate on the dev split and print the mean figures."""
    from memmesh.embedding import default_encoder

    folds = int(argv[argv.index("--folds") + 1]) if "--folds" in argv else 5
    readers = Path(argv[argv.index("--readers") + 1]) if "--readers" in argv else None
    with DEV_SPLIT.open(encoding="utf-8") as lines:
        cases = [json.loads(line) for line in lines if line.strip()]
    figures = cross_validate(cases, MemoEncoder(default_encoder()), folds, readers)
    print(json.dumps({"dev_cross_validation": {"folds": folds, **figures}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
