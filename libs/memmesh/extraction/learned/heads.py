"""A softmax classifier over unit features, trained deterministically with numpy.

Small on purpose: a few thousand labelled clauses train it in seconds, its weights are a few
kilobytes committed beside the code, and the same features and weights always give the same
answer. Training is full-batch gradient descent from zeros (no random start, no shuffling).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


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
        logits = features @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probabilities: np.ndarray = (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)
        return probabilities

    def save(self, path: Path) -> None:
        """Write the head as a compressed .npz (class names stored alongside)."""
        np.savez_compressed(
            path,
            classes=np.array(self.classes),
            weights=self.weights.astype(np.float32),
            bias=self.bias.astype(np.float32),
        )

    @classmethod
    def load(cls, path: Path) -> SoftmaxHead:
        """Read a head written by `save`."""
        with np.load(path, allow_pickle=False) as data:
            return cls(
                classes=tuple(str(c) for c in data["classes"]),
                weights=data["weights"].astype(np.float32),
                bias=data["bias"].astype(np.float32),
            )


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
    index = {name: i for i, name in enumerate(classes)}
    targets = np.array([index[label] for label in labels])
    count = features.shape[0]
    one_hot = np.zeros((count, len(classes)), dtype=np.float64)
    one_hot[np.arange(count), targets] = 1.0
    # Rare classes weigh as much as common ones in total, so "none" does not drown the rest.
    per_class = one_hot.sum(axis=0)
    sample_weight = (count / (len(classes) * np.maximum(per_class, 1.0)))[targets]
    x = features.astype(np.float64)
    weights = np.zeros((x.shape[1], len(classes)))
    bias = np.zeros(len(classes))
    total_weight = sample_weight.sum()
    for _ in range(steps):
        logits = x @ weights + bias
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        error = (probs - one_hot) * sample_weight[:, None] / total_weight
        weights -= learning_rate * (x.T @ error + l2 * weights)
        bias -= learning_rate * error.sum(axis=0)
    return SoftmaxHead(classes, weights.astype(np.float32), bias.astype(np.float32))
