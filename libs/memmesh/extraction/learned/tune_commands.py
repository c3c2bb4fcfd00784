"""Tune the command reader: the encoder's top layers and a softmax head, trained together on
the labelled turns (the dev split and the first four rounds of command probes).

usage: python -m memmesh.extraction.learned.tune_commands
Needs PyTorch, which nothing at run time does; the dev extra that `make setup` installs
carries it (torch==2.13.0, the CPU build). The lower layers are frozen, so
their outputs are computed once and only the top layers run forward and back: a few minutes
on two cores. The run is seeded and single-threaded, so the same turns give the same file.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import fields
from functools import cache
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from memmesh.embedding.weights import BertWeights, LayerWeights

from .command_reader import CommandReader, turns_fingerprint
from .commands import COMMAND_CLASSES, LabelledTurn
from .heads import SoftmaxHead
from .model_files import COMMAND_READER_PATH

# Three layers against six were compared on two of the dev split's folds at three epochs
# (README); the epochs, batch size and rates were set once and not searched. The shipped reader
# and the folds of `memmesh.bench.cv_extraction` are tuned with these.
TUNED_LAYERS = 3
EPOCHS = 4
BATCH_SIZE = 32
LEARNING_RATE = 5e-5
HEAD_LEARNING_RATE = 2e-3
SEED = 0


def tune(
    turns: Sequence[LabelledTurn],
    base: BertWeights,
    tokenizer: Tokenizer,
    tuned_layers: int = TUNED_LAYERS,
    epochs: int = EPOCHS,
) -> CommandReader:
    """The reader the turns give: the top `tuned_layers` of `base` and a head, trained with
    class-balanced cross-entropy."""
    import torch

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    classes = COMMAND_CLASSES
    labels = torch.tensor([classes.index(t.label) for t in turns])
    token_ids = [tokenizer.encode(t.text).ids for t in turns]
    frozen = len(base.layers) - tuned_layers
    lower_layers = [_TorchLayer(layer, base.head_count, base.eps) for layer in base.layers[:frozen]]
    with torch.no_grad():
        lower = [_embed(base, lower_layers, ids) for ids in token_ids]
    top = [_TorchLayer(layer, base.head_count, base.eps) for layer in base.layers[frozen:]]
    head = torch.nn.Linear(base.hidden_size, len(classes))
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    optimizer = torch.optim.AdamW(
        [
            {"params": [p for layer in top for p in layer.parameters()], "lr": LEARNING_RATE},
            {"params": list(head.parameters()), "lr": HEAD_LEARNING_RATE, "weight_decay": 0.0},
        ]
    )
    counts = Counter(labels.tolist())
    class_weights = torch.tensor(
        [len(turns) / (len(classes) * max(counts.get(i, 0), 1)) for i in range(len(classes))]
    )
    loss_of = torch.nn.CrossEntropyLoss(weight=class_weights)
    generator = torch.Generator().manual_seed(SEED)
    for _ in range(epochs):
        # Batches of turns of about one length (little padding to run through), in a new
        # order each epoch.
        shuffled = torch.randperm(len(turns), generator=generator).tolist()
        by_length = sorted(shuffled, key=lambda row: len(token_ids[row]))
        batches = [
            by_length[start : start + BATCH_SIZE] for start in range(0, len(turns), BATCH_SIZE)
        ]
        for batch in torch.randperm(len(batches), generator=generator).tolist():
            rows = batches[batch]
            states, mask = _padded([lower[row] for row in rows])
            pooled = _pooled(top, states, mask)
            loss = loss_of(head(pooled), labels[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    tuned = tuple(layer.weights() for layer in top)
    softmax_head = SoftmaxHead(
        classes,
        head.weight.detach().numpy().T.astype(np.float32).copy(),
        head.bias.detach().numpy().astype(np.float32).copy(),
    )
    return CommandReader(tuned, softmax_head, turns_fingerprint([(t.text, t.label) for t in turns]))


def _embed(base: BertWeights, lower_layers: list[Any], ids: list[int]) -> Any:
    """Token vectors after the embeddings and the frozen lower layers (one text)."""
    import torch

    x = torch.from_numpy(base.word_embeddings[ids]) + torch.from_numpy(
        base.position_embeddings[: len(ids)]
    )
    x = torch.nn.functional.layer_norm(
        x,
        (base.hidden_size,),
        torch.from_numpy(base.embedding_norm_weight),
        torch.from_numpy(base.embedding_norm_bias),
        base.eps,
    ).unsqueeze(0)
    mask = torch.ones(1, len(ids))
    for layer in lower_layers:
        x = layer(x, mask)
    return x.squeeze(0)


def _padded(states: list[Any]) -> tuple[Any, Any]:
    import torch

    length = max(s.shape[0] for s in states)
    padded = torch.zeros(len(states), length, states[0].shape[1])
    mask = torch.zeros(len(states), length)
    for row, state in enumerate(states):
        padded[row, : state.shape[0]] = state
        mask[row, : state.shape[0]] = 1.0
    return padded, mask


def _pooled(layers: list[Any], states: Any, mask: Any) -> Any:
    """The mean of the top layers' output over real tokens, L2-normalised, as the encoder
    gives it."""
    import torch

    for layer in layers:
        states = layer(states, mask)
    summed = (states * mask.unsqueeze(2)).sum(dim=1)
    pooled = summed / mask.sum(dim=1, keepdim=True)
    return torch.nn.functional.normalize(pooled, dim=1)


@cache
def _torch_layer_class() -> Any:
    import torch

    class TorchLayer(torch.nn.Module):  # type: ignore[misc]
        """One encoder layer as memmesh.embedding.model builds it, with trainable weights."""

        def __init__(self, weights: LayerWeights, head_count: int, eps: float) -> None:
            super().__init__()
            self.head_count, self.eps = head_count, eps
            self.names = [field.name for field in fields(LayerWeights)]
            for name in self.names:
                value = torch.from_numpy(np.array(getattr(weights, name), dtype=np.float32))
                setattr(self, name, torch.nn.Parameter(value))

        def forward(self, x: Any, mask: Any) -> Any:
            batch, length, hidden = x.shape
            size = hidden // self.head_count
            qkv = (x @ self.qkv_weight + self.qkv_bias).reshape(
                batch, length, 3, self.head_count, size
            )
            query, key, value = qkv.permute(2, 0, 3, 1, 4)
            scores = query @ key.transpose(-1, -2) + ((1.0 - mask) * -1e9)[:, None, None, :]
            context = (scores.softmax(-1) @ value).transpose(1, 2).reshape(batch, length, hidden)
            attended = torch.nn.functional.layer_norm(
                context @ self.attention_output_weight + self.attention_output_bias + x,
                (hidden,),
                self.attention_norm_weight,
                self.attention_norm_bias,
                self.eps,
            )
            intermediate = torch.nn.functional.gelu(
                attended @ self.intermediate_weight + self.intermediate_bias
            )
            return torch.nn.functional.layer_norm(
                intermediate @ self.output_weight + self.output_bias + attended,
                (hidden,),
                self.output_norm_weight,
                self.output_norm_bias,
                self.eps,
            )

        def weights(self) -> LayerWeights:
            return LayerWeights(
                **{
                    name: getattr(self, name).detach().numpy().astype(np.float32).copy()
                    for name in self.names
                }
            )

    return TorchLayer


def _TorchLayer(weights: LayerWeights, head_count: int, eps: float) -> Any:  # noqa: N802
    return _torch_layer_class()(weights, head_count, eps)


def main(argv: list[str]) -> int:
    """Tune on the dev split and the probe rounds the command head learns from; save."""
    from memmesh.embedding.weights import load_tokenizer, load_weights, model_directory

    from .train import COMMAND_PROBE_ROUNDS, DEFAULT_CORPORA, command_training_turns

    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    directory = model_directory()
    turns = command_training_turns(DEFAULT_CORPORA, COMMAND_PROBE_ROUNDS)
    reader = tune(turns, load_weights(directory), load_tokenizer(directory))
    reader.save(COMMAND_READER_PATH)
    print(f"tuned {len(reader.layers)} layers on {len(turns)} turns -> {COMMAND_READER_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
