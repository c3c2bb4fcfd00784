"""The command reader: the sentence encoder with its top layers tuned to hear memory commands,
and the softmax head tuned with them (tune_commands.py trains both).

The frozen encoder's vectors are made to tell sentences apart by topic, and a memory command
is said about any topic in any words: a head over them hears the wordings it was shown and
few others. Tuning the top layers on the labelled turns lets the encoder itself learn what a
request about memory sounds like. The lower layers and the embeddings stay the installed
model's, so the file holds only the tuned layers (int8 matrices with a scale per column, as
the int8 encoder runs them) and the head, with a fingerprint of the turns they learned from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from memmesh.embedding.encoder import Encoder
from memmesh.embedding.model import int8_columns
from memmesh.embedding.weights import (
    BertWeights,
    LayerWeights,
    load_tokenizer,
    load_weights,
    model_directory,
)

from .heads import SoftmaxHead

# Matrices are stored as int8 with a float32 scale per output column; everything else float32.
_MATRICES = frozenset(
    {"qkv_weight", "attention_output_weight", "intermediate_weight", "output_weight"}
)


# The reader sees only turns that speak of memory (commands.py's word screen), and the same
# turn is read again mostly within a conversation: a few hundred vectors are plenty.
READER_CACHE_SIZE = 512


@dataclass(frozen=True)
class CommandReader:
    """The tuned top layers, the head over what they give, and what they learned from."""

    layers: tuple[LayerWeights, ...]
    head: SoftmaxHead
    fingerprint: str

    def weights(self, base: BertWeights) -> BertWeights:
        """The installed model's weights with its top layers replaced by the tuned ones."""
        kept = base.layers[: len(base.layers) - len(self.layers)]
        return replace(base, layers=(*kept, *self.layers))

    def encoder(self, cache_size: int = READER_CACHE_SIZE) -> Encoder:
        """The int8 encoder the head reads, on the installed model with the tuned top layers."""
        directory = model_directory()
        return Encoder(
            self.weights(load_weights(directory)),
            load_tokenizer(directory),
            cache_size=cache_size,
            quantized=True,
        )

    def save(self, path: Path) -> None:
        """Write the reader as a compressed .npz."""
        arrays: dict[str, Any] = {
            "classes": np.array(self.head.classes),
            "head_weights": self.head.weights.astype(np.float32),
            "head_bias": self.head.bias.astype(np.float32),
            "fingerprint": np.array(self.fingerprint),
            "layer_count": np.array(len(self.layers), np.int64),
        }
        for index, layer in enumerate(self.layers):
            for field in fields(LayerWeights):
                value = getattr(layer, field.name)
                if field.name in _MATRICES:
                    values, scales = int8_columns(value)
                    arrays[f"{index}.{field.name}"] = values
                    arrays[f"{index}.{field.name}.scale"] = scales
                else:
                    arrays[f"{index}.{field.name}"] = value.astype(np.float32)
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> CommandReader:
        """Read a reader written by `save`."""
        with np.load(path, allow_pickle=False) as data:
            stored = {name: data[name] for name in data.files}
        layers = []
        for index in range(int(stored["layer_count"])):
            values: dict[str, np.ndarray] = {}
            for field in fields(LayerWeights):
                array = stored[f"{index}.{field.name}"]
                if field.name in _MATRICES:
                    scale = stored[f"{index}.{field.name}.scale"]
                    array = array.astype(np.float32) * scale
                values[field.name] = np.ascontiguousarray(array, dtype=np.float32)
            layers.append(LayerWeights(**values))
        head = SoftmaxHead(
            tuple(str(c) for c in stored["classes"]),
            stored["head_weights"].astype(np.float32),
            stored["head_bias"].astype(np.float32),
        )
        return cls(tuple(layers), head, str(stored["fingerprint"]))


def turns_fingerprint(turns: Sequence[tuple[str, str]]) -> str:
    """A digest of (text, label) pairs in order: the reader records what it learned from."""
    digest = hashlib.sha256()
    for text, label in turns:
        digest.update(f"{label}\t{text}\n".encode())
    return digest.hexdigest()[:16]
