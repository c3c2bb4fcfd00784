"""The static embedding is the encoder's own embedding of each token, centred and projected
on its principal components, and a text's vector is the mean of its content tokens' rows:
deterministic, unit length, meaningful."""

from __future__ import annotations

import numpy as np
import pytest

from memmesh.embedding.static import (
    DIMENSIONS,
    DISTILLATION_VERSION,
    StaticEncoder,
    default_static_encoder,
    distil_rows,
    static_tokenizer,
    table_path,
    weights_digest,
)
from memmesh.embedding.weights import load_weights, model_directory

# float16 storage keeps about 3 significant digits of rows of magnitude below 1.
FLOAT16_TOLERANCE = 2e-3


@pytest.fixture(scope="module")
def static() -> StaticEncoder:
    return default_static_encoder()


def test_table_rows_are_the_encoders_embeddings_of_each_token_centred_and_projected(
    static: StaticEncoder,
) -> None:
    directory = model_directory()
    table = np.load(table_path(directory), mmap_mode="r").astype(np.float32)
    assert table.shape == (30522, DIMENSIONS) and static.dimension == DIMENSIONS
    # Rows distilled again from the installed weights map onto the table's rows by one
    # affine map (centring, then projection): more rows than unknowns, so a least-squares
    # fit only leaves float16 rounding when the table was distilled from these weights.
    sample = np.random.default_rng(3).choice(len(table), size=800, replace=False)
    distilled = distil_rows(load_weights(directory), static_tokenizer(directory), sample.tolist())
    affine = np.hstack([distilled, np.ones((len(sample), 1), dtype=np.float32)])
    fit, *_ = np.linalg.lstsq(affine, table[sample], rcond=None)
    assert np.abs(affine @ fit - table[sample]).max() <= FLOAT16_TOLERANCE
    # Centred, and the columns are principal components: uncorrelated, strongest first.
    assert np.abs(table.mean(axis=0)).max() <= FLOAT16_TOLERANCE
    covariance = np.cov(table, rowvar=False)
    variances = np.diag(covariance)
    assert np.all(np.diff(variances) <= 1e-4)
    off_diagonal = covariance - np.diag(variances)
    assert np.abs(off_diagonal).max() <= 1e-3 * variances[0]


def test_cache_file_is_named_after_the_weights_and_the_distillation() -> None:
    directory = model_directory()
    name = table_path(directory).name
    assert weights_digest(directory) in name
    assert name.endswith(f"-v{DISTILLATION_VERSION}.npy")


def test_vectors_are_unit_length_deterministic_and_zero_without_content(
    static: StaticEncoder,
) -> None:
    texts = ["my fiancée Rosa teaches chemistry", "the", "", "?!", "I drive an old Volvo"]
    first, again = static.encode(texts), static.encode(list(reversed(texts)))[::-1]
    assert np.array_equal(first, again)
    norms = np.linalg.norm(first, axis=1)
    assert norms[0] == pytest.approx(1.0, abs=1e-5)
    assert norms[4] == pytest.approx(1.0, abs=1e-5)
    assert not first[1].any() and not first[2].any() and not first[3].any()


@pytest.mark.parametrize(
    ("query", "related", "unrelated"),
    [
        ("a curry recipe", "spicy food wrecks my stomach", "the meeting moved to Tuesday"),
        ("where does my sister live", "my sister moved to Denver", "I love jazz concerts"),
        ("what is my cat called", "our cat Miso is twelve", "I still drive an old Volvo"),
        ("getting the car ready for winter", "I drive my dad's old Volvo", "I love jazz"),
    ],
)
def test_a_query_is_closer_to_a_related_text_than_to_an_unrelated_one(
    static: StaticEncoder, query: str, related: str, unrelated: str
) -> None:
    asked, near, far = static.encode([query, related, unrelated])
    assert float(asked @ near) > float(asked @ far) + 0.05
