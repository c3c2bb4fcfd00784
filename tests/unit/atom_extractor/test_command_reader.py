"""The command reader: the tuned top layers shipped in the package learned from the turns
training reads now, run in the int8 encoder as they ran while tuning, and load back from
their file as saved."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from memmesh.embedding.encoder import Encoder
from memmesh.embedding.model import int8_columns
from memmesh.embedding.weights import (
    BertWeights,
    LayerWeights,
    load_tokenizer,
    load_weights,
    model_directory,
)
from memmesh.extraction.learned.command_reader import CommandReader, turns_fingerprint
from memmesh.extraction.learned.commands import COMMAND_CLASSES, NO_COMMAND, LabelledTurn
from memmesh.extraction.learned.model_files import COMMAND_READER_PATH
from memmesh.extraction.learned.train import (
    COMMAND_PROBE_ROUNDS,
    DEFAULT_CORPORA,
    command_training_turns,
)
from memmesh.extraction.learned.tune_commands import TUNED_LAYERS, tune
from memmesh.extraction.model import Command

ROOT = Path(__file__).parents[3]


@pytest.fixture(scope="module")
def base() -> BertWeights:
    return load_weights(model_directory())


def test_the_shipped_reader_learned_from_the_turns_training_reads_now() -> None:
    turns = command_training_turns(
        [ROOT / p for p in DEFAULT_CORPORA], [ROOT / p for p in COMMAND_PROBE_ROUNDS]
    )
    reader = CommandReader.load(COMMAND_READER_PATH)
    # A changed corpus or probe round needs the reader tuned again (tune_commands).
    assert reader.fingerprint == turns_fingerprint([(t.text, t.label) for t in turns])
    assert reader.head.classes == COMMAND_CLASSES
    assert reader.head.classes[0] == NO_COMMAND
    assert Command.CORRECTION.value not in reader.head.classes
    assert len(reader.layers) == TUNED_LAYERS


def test_the_reader_replaces_only_the_top_layers(base: BertWeights) -> None:
    reader = CommandReader.load(COMMAND_READER_PATH)
    weights = reader.weights(base)
    kept = len(base.layers) - TUNED_LAYERS
    assert weights.layers[:kept] == base.layers[:kept]
    assert weights.word_embeddings is base.word_embeddings
    for tuned, installed in zip(weights.layers[kept:], base.layers[kept:], strict=True):
        assert tuned.qkv_weight.shape == installed.qkv_weight.shape
        assert not np.allclose(tuned.qkv_weight, installed.qkv_weight, atol=1e-4)


def test_the_shipped_reader_hears_a_command_and_not_news() -> None:
    reader = CommandReader.load(COMMAND_READER_PATH)
    encoder = reader.encoder(cache_size=0)
    rows = reader.head.probabilities(
        encoder.encode(["forget the thing about my old job", "my ex moved to Leeds last year"])
    )
    classes = reader.head.classes
    assert classes[int(rows[0].argmax())] == Command.FORGET.value
    assert classes[int(rows[1].argmax())] == NO_COMMAND


TURNS = [
    LabelledTurn("forget what I told you about my knee", Command.FORGET.value),
    LabelledTurn("never bring up my divorce again", Command.DO_NOT_MENTION.value),
    LabelledTurn("wipe everything you have on me", Command.FORGET_EVERYTHING.value),
    LabelledTurn("my sister lives in Porto", NO_COMMAND),
    LabelledTurn("I had pasta for lunch", NO_COMMAND),
    LabelledTurn("we are going hiking on Sunday", NO_COMMAND),
] * 4


def _torch_vectors(reader: CommandReader, base: BertWeights, texts: list[str]) -> np.ndarray:
    """The tuned layers' pooled output as the tuning code computes it."""
    import torch

    from memmesh.extraction.learned import tune_commands

    weights = reader.weights(base)
    tokenizer = load_tokenizer(model_directory())
    layers = [
        tune_commands._TorchLayer(layer, base.head_count, base.eps) for layer in weights.layers
    ]
    with torch.no_grad():
        states = [
            tune_commands._embed(base, layers[: -len(reader.layers)], tokenizer.encode(t).ids)
            for t in texts
        ]
        padded, mask = tune_commands._padded(states)
        return np.asarray(tune_commands._pooled(layers[-len(reader.layers) :], padded, mask))


def test_tuning_is_deterministic_and_runs_the_layers_as_the_encoder_does(
    base: BertWeights, tmp_path: Path
) -> None:
    tokenizer = load_tokenizer(model_directory())
    # The head starts at zero, so the first step moves only the head: three steps reach the layer.
    first = tune(TURNS, base, tokenizer, tuned_layers=1, epochs=3)
    second = tune(TURNS, base, tokenizer, tuned_layers=1, epochs=3)
    for field in fields(LayerWeights):
        assert np.array_equal(
            getattr(first.layers[0], field.name), getattr(second.layers[0], field.name)
        )
    assert not np.allclose(first.layers[0].qkv_weight, base.layers[-1].qkv_weight, atol=1e-6)
    texts = ["forget my knee", "my sister lives in Porto and works at a bank"]
    # The float encoder built from the tuned weights gives the vectors the tuning saw.
    float_vectors = Encoder(first.weights(base), tokenizer, cache_size=0).encode(texts)
    assert np.allclose(float_vectors, _torch_vectors(first, base, texts), atol=1e-5)
    # Saved and loaded, the matrices are the int8 values the int8 encoder runs.
    path = tmp_path / "reader.npz"
    first.save(path)
    loaded = CommandReader.load(path)
    assert loaded.fingerprint == first.fingerprint
    assert loaded.head.classes == first.head.classes
    assert np.array_equal(loaded.head.weights, first.head.weights)
    for field in ("qkv_weight", "intermediate_weight"):
        saved_values, _ = int8_columns(getattr(first.layers[0], field))
        loaded_values, _ = int8_columns(getattr(loaded.layers[0], field))
        assert np.array_equal(saved_values, loaded_values)
    assert np.array_equal(loaded.layers[0].output_norm_bias, first.layers[0].output_norm_bias)
    int8_vectors = Encoder(loaded.weights(base), tokenizer, cache_size=0, quantized=True).encode(
        texts
    )
    assert np.allclose(int8_vectors, float_vectors, atol=0.05)
