"""A BERT forward pass in numpy, with mean pooling and L2 normalisation (sentence-transformers'
all-MiniLM-L6-v2 pipeline), float32 throughout.

Token vectors are kept as one (batch · length, hidden) matrix so that each dense layer is a
single GEMM over the whole batch; elementwise steps work in place to spare allocations.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memmesh.embedding.weights import BertWeights, LayerWeights, Matrix

# Abramowitz & Stegun 7.1.26: erf to 1.5e-7, below float32 resolution; numpy has no erf.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(
    np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
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
    hidden = weights.word_embeddings[token_ids.reshape(-1)]
    positioned = hidden.reshape(batch, length, -1)  # a view: the sum lands in `hidden`
    positioned += weights.position_embeddings[:length]
    _layer_norm(hidden, weights.embedding_norm_weight, weights.embedding_norm_bias, weights.eps)
    # (batch, 1, 1, length): broadcast over heads and query positions.
    score_bias = ((1.0 - mask) * _MASKED)[:, None, None, :]
    for layer in weights.layers:
        hidden = _layer(hidden, layer, score_bias, weights.head_count, weights.eps)
    token_vectors = hidden.reshape(batch, length, -1)
    pooled = np.einsum("bsh,bs->bh", token_vectors, mask)
    pooled /= np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
    pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
    embeddings: Matrix = pooled
    return embeddings


def _layer(
    hidden: Matrix, layer: LayerWeights, score_bias: Matrix, head_count: int, eps: float
) -> Matrix:
    """One encoder layer over (batch · length, hidden) token vectors."""
    batch, _, _, length = score_bias.shape
    size = hidden.shape[1]
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
    context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * length, size)
    attended = context @ layer.attention_output_weight
    attended += layer.attention_output_bias
    attended += hidden
    _layer_norm(attended, layer.attention_norm_weight, layer.attention_norm_bias, eps)
    intermediate = attended @ layer.intermediate_weight
    intermediate += layer.intermediate_bias
    output = _gelu(intermediate) @ layer.output_weight
    output += layer.output_bias
    output += attended
    _layer_norm(output, layer.output_norm_weight, layer.output_norm_bias, eps)
    return output


def _layer_norm(values: Matrix, weight: Matrix, bias: Matrix, eps: float) -> None:
    """Normalises each row of `values` in place."""
    values -= values.mean(axis=-1, keepdims=True)
    variance = np.einsum("ij,ij->i", values, values)[:, None]
    variance /= np.float32(values.shape[-1])
    variance += np.float32(eps)
    np.sqrt(variance, out=variance)
    values /= variance
    values *= weight
    values += bias


def _gelu(values: Matrix) -> Matrix:
    """x·Φ(x) with the exact (erf) normal CDF, as BERT's "gelu"; overwrites `values`."""
    cdf = _erf(values * _SQRT_HALF)
    cdf += np.float32(1.0)
    cdf *= np.float32(0.5)
    values *= cdf
    return values


def _erf(values: Matrix) -> Matrix:
    """erf(values), written over `values`."""
    magnitude = np.abs(values)
    t = magnitude * _ERF_P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    polynomial = np.full_like(t, _ERF_A[0])
    for coefficient in _ERF_A[1:]:  # Horner, highest power first
        polynomial *= t
        polynomial += coefficient
    polynomial *= t
    np.square(magnitude, out=magnitude)
    np.negative(magnitude, out=magnitude)
    np.exp(magnitude, out=magnitude)
    polynomial *= magnitude
    np.subtract(np.float32(1.0), polynomial, out=polynomial)
    np.copysign(polynomial, values, out=values)
    return values
