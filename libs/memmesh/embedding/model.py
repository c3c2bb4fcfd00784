"""A BERT forward pass in numpy, with mean pooling and L2 normalisation (sentence-transformers'
all-MiniLM-L6-v2 pipeline), float32 throughout."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memmesh.embedding.weights import BertWeights, LayerWeights, Matrix

# Abramowitz & Stegun 7.1.26: erf to 1.5e-7, below float32 resolution; numpy has no erf.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(
    np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
_SQRT_HALF = np.float32(np.sqrt(0.5))
# Added to the attention scores of padding: exp() of it is 0 in float32.
_MASKED = np.float32(-1e9)


def encode_tokens(
    weights: BertWeights, token_ids: NDArray[np.integer], attention_mask: NDArray[np.integer]
) -> Matrix:
    """Unit-length sentence embeddings (batch, hidden) for padded token ids (batch, length)."""
    batch, length = token_ids.shape
    mask = attention_mask.astype(np.float32)
    hidden = weights.word_embeddings[token_ids] + weights.position_embeddings[:length]
    hidden = _layer_norm(
        hidden, weights.embedding_norm_weight, weights.embedding_norm_bias, weights.layer_norm_eps
    )
    # (batch, 1, 1, length): broadcast over heads and query positions.
    score_bias = ((1.0 - mask) * _MASKED)[:, None, None, :]
    for layer in weights.layers:
        hidden = _layer(hidden, layer, score_bias, weights.head_count, weights.layer_norm_eps)
    pooled = np.einsum("bsh,bs->bh", hidden, mask) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    embeddings: Matrix = (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return embeddings


def _layer(
    hidden: Matrix, layer: LayerWeights, score_bias: Matrix, head_count: int, eps: float
) -> Matrix:
    batch, length, size = hidden.shape
    head_size = size // head_count
    qkv = hidden @ layer.qkv_weight
    qkv += layer.qkv_bias
    # (3, batch, heads, length, head_size)
    query, key, value = qkv.reshape(batch, length, 3, head_count, head_size).transpose(
        2, 0, 3, 1, 4
    )
    scores = query @ key.transpose(0, 1, 3, 2)  # the query is pre-scaled by 1/sqrt(head_size)
    scores += score_bias
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch, length, size)
    attended = context @ layer.attention_output_weight
    attended += layer.attention_output_bias
    attended += hidden
    hidden = _layer_norm(attended, layer.attention_norm_weight, layer.attention_norm_bias, eps)
    intermediate = hidden @ layer.intermediate_weight
    intermediate += layer.intermediate_bias
    output = _gelu(intermediate) @ layer.output_weight
    output += layer.output_bias
    output += hidden
    return _layer_norm(output, layer.output_norm_weight, layer.output_norm_bias, eps)


def _layer_norm(values: Matrix, weight: Matrix, bias: Matrix, eps: float) -> Matrix:
    centred: Matrix = values - values.mean(axis=-1, keepdims=True)
    variance = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred /= np.sqrt(variance + np.float32(eps))
    centred *= weight
    centred += bias
    return centred


def _gelu(values: Matrix) -> Matrix:
    """x·Φ(x) with the exact (erf) normal CDF, as BERT's "gelu"."""
    gelu: Matrix = values * (np.float32(0.5) * (np.float32(1.0) + _erf(values * _SQRT_HALF)))
    return gelu


def _erf(values: Matrix) -> Matrix:
    magnitude = np.abs(values)
    t = np.float32(1.0) / (np.float32(1.0) + _ERF_P * magnitude)
    a1, a2, a3, a4, a5 = _ERF_A
    polynomial = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5))))
    result = np.float32(1.0) - polynomial * np.exp(-magnitude * magnitude)
    signed: Matrix = np.copysign(result, values)
    return signed
