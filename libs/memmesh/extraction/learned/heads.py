"""Softmax classifiers over unit features, trained deterministically with numpy.

Small on purpose: a few thousand labelled clauses train them in seconds, their weights are
committed beside the code, and the same features and weights always give the same answer.
The linear head trains by full-batch gradient descent from zeros; the hidden-layer head from a
start drawn with a fixed seed (no shuffling either). Both train in float32, the precision the
heads are stored and run in: a full-batch step over the dev split's clauses is bound by
reading the feature matrix, and float32 halves that. The clause heads are one of each averaged
with the lexical head (lexical.ClauseHeads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np


class ClassHead(Protocol):
    """What the extractor needs of a head: class names and one probability row per feature row."""

    @property
    def classes(self) -> tuple[str, ...]: ...

    def probabilities(self, features: np.ndarray) -> np.ndarray: ...


def softmax(logits: np.ndarray) -> np.ndarray:
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
    return probabilities


@dataclass(frozen=True)
class SoftmaxHead:
    """Weights (features x classes), bias and class names of a trained head."""

    classes: tuple[str, ...]
    weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Class probabilities, one row per feature row."""
        if features.shape[0] == 0:
            return np.zeros((0, len(self.classes)), dtype=np.float32)
        return softmax(features @ self.weights + self.bias).astype(np.float32)

    def save(self, path: Path) -> None:
        """Write the head as a compressed .npz (class names stored alongside)."""
        save_arrays(path, self.classes, {"weights": self.weights, "bias": self.bias})

    @classmethod
    def load(cls, path: Path) -> SoftmaxHead:
        """Read a head written by `save`."""
        classes, arrays = load_arrays(path)
        return cls(classes, **arrays)


def save_arrays(
    path: Path,
    classes: tuple[str, ...],
    arrays: dict[str, np.ndarray],
    integers: dict[str, np.ndarray] | None = None,
) -> None:
    """Write float arrays as float32 and `integers` as int64, with the class names."""
    named: dict[str, Any] = {name: array.astype(np.float32) for name, array in arrays.items()}
    named |= {name: array.astype(np.int64) for name, array in (integers or {}).items()}
    np.savez_compressed(path, classes=np.array(classes), **named)


def load_arrays(path: Path) -> tuple[tuple[str, ...], dict[str, np.ndarray]]:
    """Read what `save_arrays` wrote: float arrays as float32, integer arrays as they are."""
    with np.load(path, allow_pickle=False) as data:
        classes = tuple(str(c) for c in data["classes"])
        # Each read of a member decompresses it again: read each once.
        stored = {name: data[name] for name in data.files if name != "classes"}
    arrays = {
        name: array if array.dtype.kind == "i" else array.astype(np.float32)
        for name, array in stored.items()
    }
    return classes, arrays


def train_head(
    features: np.ndarray,
    labels: list[str],
    classes: tuple[str, ...],
    *,
    l2: float = 1e-3,
    steps: int = 600,
    learning_rate: float = 0.5,
) -> SoftmaxHead:
    """Fit a class-balanced L2-regularised softmax regression by full-batch gradient descent."""
    targets, one_hot = class_targets(labels, classes)
    # Rare classes weigh as much as common ones in total, so "none" does not drown the rest.
    sample_weight = class_weights(targets, len(classes))
    x, one_hot = features.astype(np.float32), one_hot.astype(np.float32)
    sample_weight = (sample_weight / sample_weight.sum()).astype(np.float32)
    weights = np.zeros((x.shape[1], len(classes)), dtype=np.float32)
    bias = np.zeros(len(classes), dtype=np.float32)
    for _ in range(steps):
        error = (softmax(x @ weights + bias) - one_hot) * sample_weight[:, None]
        weights -= learning_rate * (x.T @ error + l2 * weights)
        bias -= learning_rate * error.sum(axis=0)
    return SoftmaxHead(classes, weights, bias)


@dataclass(frozen=True)
class HiddenLayerHead:
    """A softmax over one ReLU hidden layer: it sees combinations of features (a clause's
    meaning with its markers) that a linear head weighs one by one."""

    classes: tuple[str, ...]
    hidden_weights: np.ndarray
    hidden_bias: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Class probabilities, one row per feature row."""
        if features.shape[0] == 0:
            return np.zeros((0, len(self.classes)), dtype=np.float32)
        hidden = np.maximum(features @ self.hidden_weights + self.hidden_bias, 0.0)
        return softmax(hidden @ self.weights + self.bias).astype(np.float32)

    def save(self, path: Path) -> None:
        """Write the head as a compressed .npz (class names stored alongside)."""
        arrays = {
            "hidden_weights": self.hidden_weights,
            "hidden_bias": self.hidden_bias,
            "weights": self.weights,
            "bias": self.bias,
        }
        save_arrays(path, self.classes, arrays)

    @classmethod
    def load(cls, path: Path) -> HiddenLayerHead:
        """Read a head written by `save`."""
        classes, arrays = load_arrays(path)
        return cls(classes, **arrays)


def class_targets(labels: Sequence[str], classes: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Each label's class index, and the same as float64 one-hot rows."""
    index = {name: i for i, name in enumerate(classes)}
    targets = np.array([index[label] for label in labels])
    one_hot: np.ndarray = np.eye(len(classes))[targets]
    return targets, one_hot


def class_weights(targets: np.ndarray, class_count: int) -> np.ndarray:
    """Per-sample weights under which every class weighs the same in total."""
    per_class = np.bincount(targets, minlength=class_count).astype(np.float64)
    weights: np.ndarray = (len(targets) / (class_count * np.maximum(per_class, 1.0)))[targets]
    return weights


def adam_step(
    param: np.ndarray,
    gradient: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    step: int,
    learning_rate: float,
) -> None:
    """One Adam step (beta 0.9 and 0.999), in place on the parameter and its two moments."""
    first *= 0.9
    first += 0.1 * gradient
    second *= 0.999
    second += 0.001 * gradient * gradient
    corrected = np.sqrt(second / (1 - 0.999**step)) + 1e-8
    param -= learning_rate * (first / (1 - 0.9**step)) / corrected


def train_hidden_layer_head(
    features: np.ndarray,
    labels: Sequence[str],
    classes: tuple[str, ...],
    *,
    hidden: int = 256,
    steps: int = 300,
    learning_rate: float = 3e-3,
    l2: float = 1e-3,
    seed: int = 0,
) -> HiddenLayerHead:
    """Fit a class-balanced hidden-layer softmax by full-batch Adam from a seeded He start.

    With l2 at 1e-4 the layer fitted the dev split's short fragments one by one ("PhD
    student" alone came out as no fact); 1e-3 keeps it smooth, 3e-3 cost precision."""
    targets, one_hot = class_targets(labels, classes)
    sample_weight = class_weights(targets, len(classes))
    sample_weight = (sample_weight / sample_weight.sum()).astype(np.float32)
    x, one_hot = features.astype(np.float32), one_hot.astype(np.float32)
    start = np.random.default_rng(seed)
    params = [
        start.normal(0.0, np.sqrt(2.0 / x.shape[1]), (x.shape[1], hidden)).astype(np.float32),
        np.zeros(hidden, dtype=np.float32),
        start.normal(0.0, np.sqrt(1.0 / hidden), (hidden, len(classes))).astype(np.float32),
        np.zeros(len(classes), dtype=np.float32),
    ]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, steps + 1):
        pre = x @ params[0] + params[1]
        activation = np.maximum(pre, 0.0)
        error = (softmax(activation @ params[2] + params[3]) - one_hot) * sample_weight[:, None]
        back = (error @ params[2].T) * (pre > 0)
        grads = [
            x.T @ back + l2 * params[0],
            back.sum(axis=0),
            activation.T @ error + l2 * params[2],
            error.sum(axis=0),
        ]
        for i, grad in enumerate(grads):
            adam_step(params[i], grad, first[i], second[i], step, learning_rate)
    return HiddenLayerHead(tuple(classes), *params)
