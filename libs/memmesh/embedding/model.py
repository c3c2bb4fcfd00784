"""A BERT forward pass in numpy, with mean pooling and L2 normalisation (sentence-transformers'
all-MiniLM-L6-v2 pipeline), float32 throughout.

The dense layers, which are nearly all of the work, run as one GEMM over the real tokens of
the whole batch, packed as one (tokens, hidden) matrix: padding costs nothing there. Only
attention sees the padded (batch, length) layout. Elementwise steps work in place.
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
    # Flat (batch · length) positions of the real tokens, in order, so each text's are adjacent.
    real = np.flatnonzero(attention_mask)
    hidden = weights.word_embeddings[token_ids.reshape(-1)[real]]
    hidden += weights.position_embeddings[real % length]
    _layer_norm(hidden, weights.embedding_norm_weight, weights.embedding_norm_bias, weights.eps)
    # (batch, 1, 1, length): broadcast over heads and query positions.
    score_bias = ((1 - attention_mask.astype(np.float32)) * _MASKED)[:, None, None, :]
    for layer in weights.layers:
        hidden = _layer(hidden, real, layer, score_bias, weights.head_count, weights.eps)
    token_counts = np.count_nonzero(attention_mask, axis=1)  # at least [CLS] and [SEP]
    starts = np.concatenate(([0], np.cumsum(token_counts)[:-1]))
    pooled = np.add.reduceat(hidden, starts, axis=0)
    pooled /= token_counts[:, None].astype(np.float32)
    pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
    embeddings: Matrix = pooled
    return embeddings


def _layer(
    hidden: Matrix,
    real: NDArray[np.intp],
    layer: LayerWeights,
    score_bias: Matrix,
    head_count: int,
    eps: float,
) -> Matrix:
    """One encoder layer over the packed (tokens, hidden) vectors of the batch's real tokens."""
    batch, _, _, length = score_bias.shape
    size = hidden.shape[1]
    head_size = size // head_count
    qkv = hidden @ layer.qkv_weight
    qkv += layer.qkv_bias
    padded = qkv
    if len(real) != batch * length:  # spread the tokens out to the padded layout
        padded = np.zeros((batch * length, 3 * size), dtype=np.float32)
        padded[real] = qkv
    # (3, batch, heads, length, head_size)
    query, key, value = padded.reshape(batch, length, 3, head_count, head_size).transpose(
        2, 0, 3, 1, 4
    )
    scores = query @ key.transpose(0, 1, 3, 2)  # the query is pre-scaled by 1/sqrt(head_size)
    scores += score_bias
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * length, size)[real]
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
