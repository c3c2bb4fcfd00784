"""Train the clause heads and the correction model from labelled corpora and write them
beside the code (the command reader is tuned by tune_commands.py).

usage: python -m memmesh.extraction.learned.train [CORPUS.jsonl ...]
With no argument it trains on the project's development split only
(fixtures/extraction/dev.jsonl); the test split and the public file are never read here.
The command reader also learns from the first four rounds of command probes
(command_training_turns); the later rounds are kept for measuring it.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..text import normalize
from .commands import LabelledTurn, labelled_turns, read_probe_rounds
from .corrections import CorrectionModel, LabelledCorrection, train_correction_model
from .heads import HiddenLayerHead, SoftmaxHead, train_head, train_hidden_layer_head
from .labels import CLASSES, LabelledUnit, labelled_units, read_cases
from .lexical import LexicalHead, clause_tokens, train_lexical_head
from .model_files import (
    CLAUSE_HEAD_PATH,
    CLAUSE_HIDDEN_HEAD_PATH,
    CLAUSE_LEXICAL_HEAD_PATH,
    CORRECTION_MODEL_PATH,
)
from .units import TextEncoder, unit_features

DEFAULT_CORPORA = (Path("fixtures/extraction/dev.jsonl"),)
COMMAND_PROBE_ROUNDS = tuple(
    Path(f"fixtures/extraction/command_probes/round{n}.tsv") for n in (1, 2, 3, 4)
)
# Chosen by 5-fold cross-validation on the dev split (folds by id hash) together with the
# extractor's thresholds: a tighter fit with a high acceptance bar beat a looser one.
TRAINING_STEPS, TRAINING_L2, TRAINING_LEARNING_RATE = 2000, 1e-4, 1.0
# How far above "no correction" the learned correction model's best pair must score to be
# heard, in a turn the rules hear no correction in. 5-fold cross-validation on the dev split
# (folds by id hash), the model alone: margin 0 found 0.737 of the 281 corrections with 19
# false ones in 3,208 other turns; 0.5 found 0.705 with 13. Behind the rules, with a pair in a
# turn whose words do not say it corrects kept only when the two mean different things (as the
# rules keep theirs): 0.5 found 0.858 with 3 false corrections added (0.09 % of turns), where
# 0 found 0.861 with 6 and the model without that check at 1.0 found 0.858 with 7.
CORRECTION_MARGIN = 0.5


@dataclass(frozen=True)
class TrainedHead:
    """The clause heads with what they were trained on: the labelled clauses and their
    features."""

    head: SoftmaxHead
    hidden_layer_head: HiddenLayerHead
    lexical_head: LexicalHead
    examples: list[LabelledUnit]
    features: np.ndarray


def train_clause_head(corpora: Sequence[Path], encoder: TextEncoder) -> TrainedHead:
    """The clause head the corpora give, with the training settings chosen above."""
    examples = list(labelled_units(read_cases(corpora)))
    features = unit_features([e.unit for e in examples], encoder)
    head = train_head(
        features,
        [e.label for e in examples],
        CLASSES,
        steps=TRAINING_STEPS,
        l2=TRAINING_L2,
        learning_rate=TRAINING_LEARNING_RATE,
    )
    hidden_layer_head = train_hidden_layer_head(features, [e.label for e in examples], CLASSES)
    lexical_head = train_lexical_head(
        [clause_tokens(e.unit) for e in examples], [e.label for e in examples], CLASSES
    )
    return TrainedHead(head, hidden_layer_head, lexical_head, examples, features)


def correction_training_turns(corpora: Sequence[Path]) -> list[LabelledCorrection]:
    """Every turn of the corpora, normalised as the extractor reads it, with the misheard and
    meant words of its correction (None for a turn that corrects nothing)."""
    turns = []
    for case in read_cases(corpora):
        correction = case.get("correction") or {}
        turns.append(
            LabelledCorrection(
                normalize(case["text"]), correction.get("heard"), correction.get("meant")
            )
        )
    return turns


def train_corrections(corpora: Sequence[Path]) -> CorrectionModel:
    """The correction model the corpora give, with the margin chosen above."""
    trained = train_correction_model(correction_training_turns(corpora))
    return CorrectionModel(trained.span_weights, trained.pair_weights, CORRECTION_MARGIN)


def command_training_turns(
    corpora: Sequence[Path], probe_rounds: Sequence[Path]
) -> list[LabelledTurn]:
    """The turns the command reader learns from: the corpora's and the probe rounds'."""
    return labelled_turns([*read_cases(corpora), *read_probe_rounds(probe_rounds)])


def main(argv: list[str]) -> int:
    """Train on the given corpora (default: the dev split) and save the heads."""
    from memmesh.embedding import default_encoder

    corpora = tuple(Path(a) for a in argv) or DEFAULT_CORPORA
    if any("test" in path.name for path in corpora):
        print("error: the test split is for evaluation only", file=sys.stderr)
        return 2
    encoder = default_encoder()
    trained = train_clause_head(corpora, encoder)
    trained.head.save(CLAUSE_HEAD_PATH)
    trained.hidden_layer_head.save(CLAUSE_HIDDEN_HEAD_PATH)
    trained.lexical_head.save(CLAUSE_LEXICAL_HEAD_PATH)
    train_corrections(corpora).save(CORRECTION_MODEL_PATH)
    counts = Counter(e.label for e in trained.examples)
    print(
        f"trained on {len(trained.examples)} clauses {dict(sorted(counts.items()))} "
        f"-> {CLAUSE_HEAD_PATH}, {CLAUSE_HIDDEN_HEAD_PATH}, {CLAUSE_LEXICAL_HEAD_PATH}; "
        f"corrections -> {CORRECTION_MODEL_PATH}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
