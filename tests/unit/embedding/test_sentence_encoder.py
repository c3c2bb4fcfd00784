"""The numpy sentence encoder matches HF transformers' all-MiniLM-L6-v2 and behaves as an
embedding should: batch-invariant, deterministic, total on odd input, meaningful."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from memmesh.embedding import Encoder, EncoderUnavailable, default_encoder
from memmesh.embedding.encoder import BLAS_THREADS_VARIABLE
from memmesh.embedding.model import BertModel, int8_columns
from memmesh.embedding.weights import load_weights, model_directory

REFERENCE = json.loads((Path(__file__).parent / "reference_vectors.json").read_text("utf-8"))
REFERENCE_TEXTS = [row["text"] for row in REFERENCE["vectors"]]
REFERENCE_VECTORS = np.array([row["vector"] for row in REFERENCE["vectors"]], dtype=np.float32)


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    # No cache: every call below runs the forward pass.
    return Encoder.load(cache_size=0)


def _assert_matches_reference(vectors: np.ndarray) -> None:
    cosines = np.sum(vectors * REFERENCE_VECTORS, axis=1) / np.linalg.norm(
        REFERENCE_VECTORS, axis=1
    )
    assert cosines.min() >= 0.9999, dict(zip(REFERENCE_TEXTS, cosines.tolist(), strict=True))
    assert np.abs(vectors - REFERENCE_VECTORS).max() <= 1e-4


def test_each_text_alone_matches_the_transformers_reference(encoder: Encoder) -> None:
    vectors = np.concatenate([encoder.encode([text]) for text in REFERENCE_TEXTS])
    _assert_matches_reference(vectors)


def test_one_padded_batch_matches_the_transformers_reference(encoder: Encoder) -> None:
    vectors = encoder.encode(REFERENCE_TEXTS)
    assert {row["token_count"] for row in REFERENCE["vectors"]} != {2}  # lengths differ: padding
    _assert_matches_reference(vectors)


def test_vectors_are_float32_unit_rows_of_the_model_dimension(encoder: Encoder) -> None:
    vectors = encoder.encode(["a short clause", "another one"])
    assert encoder.dimension == 384
    assert vectors.dtype == np.float32
    assert vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert encoder.encode([]).shape == (0, 384)


def test_a_batch_gives_the_vectors_each_text_gets_alone(encoder: Encoder) -> None:
    texts = ["I take the bus to work.", "", "Call Bo.", "My sister lives in Porto with two cats."]
    alone = np.concatenate([encoder.encode([text]) for text in texts])
    np.testing.assert_allclose(encoder.encode(texts), alone, atol=1e-6)
    many = texts * 20  # more than one chunk
    np.testing.assert_allclose(encoder.encode(many), np.tile(alone, (20, 1)), atol=1e-6)


def test_empty_and_very_long_texts_encode(encoder: Encoder) -> None:
    long_text = " ".join(f"word{index} and then some more" for index in range(3000))
    empty, long = encoder.encode(["", long_text])
    assert np.isfinite(empty).all() and np.isfinite(long).all()
    # Everything past the first 128 tokens is cut off, so appending text changes nothing.
    np.testing.assert_allclose(encoder.encode([long_text + " the end"])[0], long, atol=1e-6)


def test_paraphrases_are_closer_than_unrelated_sentences(encoder: Encoder) -> None:
    pairs = [
        ("Remind me to call my mother tomorrow.", "Don't let me forget to phone mum tomorrow."),
        ("I am allergic to peanuts.", "Peanuts give me an allergic reaction."),
        ("My daughter starts school in September.", "In September my girl begins school."),
        ("We moved to Lisbon last year.", "Last year we relocated to Lisbon."),
    ]
    first = encoder.encode([a for a, _ in pairs])
    second = encoder.encode([b for _, b in pairs])
    similarity = first @ second.T
    for index in range(len(pairs)):
        unrelated = np.delete(similarity[index], index)
        assert similarity[index, index] > 0.6
        assert similarity[index, index] > unrelated.max() + 0.2, pairs[index]


def test_two_encoders_give_identical_vectors() -> None:
    texts = ["The kettle is broken again.", "Book a table for four at eight."]
    np.testing.assert_array_equal(Encoder.load().encode(texts), Encoder.load().encode(texts))


def _arrays(value: object) -> Iterator[np.ndarray]:
    """Every array held by a weights object, through its nested dataclasses and tuples."""
    if isinstance(value, np.ndarray):
        yield value
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from _arrays(getattr(value, field.name))
    elif isinstance(value, tuple):
        for item in value:
            yield from _arrays(item)


def test_the_session_keeps_its_own_copy_of_the_weights_it_was_handed() -> None:
    # BertModel keeps no reference to the arrays it hands the session: if the session read
    # them while running, a loaded encoder would read freed memory.
    weights = load_weights(model_directory())
    model = BertModel(weights)
    ids = np.array([[101, 7592, 2088, 2003, 2307, 102]], dtype=np.int64)
    before = model.encode(ids, np.ones_like(ids))
    arrays = list(_arrays(weights))
    assert sum(array.nbytes for array in arrays) > 80_000_000  # every weight, embeddings too
    # Contiguous, so the graph hands the session these very arrays, not copies of them.
    assert all(array.flags.c_contiguous for array in arrays)
    for array in arrays:
        array.fill(np.nan)
    np.testing.assert_array_equal(model.encode(ids, np.ones_like(ids)), before)


def test_cached_vectors_equal_computed_ones_and_callers_cannot_corrupt_them() -> None:
    cached = Encoder.load(cache_size=2)
    first = cached.encode(["tea with milk", "coffee, black"])
    expected = first.copy()
    first[:] = 0.0  # the caller owns what it is given
    np.testing.assert_array_equal(cached.encode(["coffee, black", "tea with milk"]), expected[::-1])
    cached.encode(["a third text"])  # evicts the least recently used
    np.testing.assert_array_equal(cached.encode(["tea with milk"]), expected[:1])
    cached.clear_cache()
    # Computed again, alone this time: the same vector up to float32 rounding (the BLAS
    # kernel a CPU picks for a batch's shape decides the last bits).
    np.testing.assert_allclose(cached.encode(["tea with milk"]), expected[:1], rtol=0, atol=1e-6)


def test_a_limited_cache_keeps_only_the_most_recently_used_vectors() -> None:
    encoder = Encoder.load(cache_size=8)
    computed: list[str] = []
    uncached = encoder._encode_uncached

    def counting(texts: list[str]) -> np.ndarray:
        computed.extend(texts)
        return uncached(texts)

    encoder._encode_uncached = counting  # type: ignore[method-assign]
    encoder.encode(["tea with milk", "coffee, black", "a glass of water"])
    encoder.limit_cache(1)
    encoder.encode(["a glass of water"])  # the most recent stays
    encoder.encode(["tea with milk"])  # gone: computed again, and now the one kept
    encoder.encode(["a glass of water"])
    assert computed == [
        "tea with milk",
        "coffee, black",
        "a glass of water",
        "tea with milk",
        "a glass of water",
    ]


def test_a_text_encoded_alone_or_in_a_batch_gets_the_same_vector_up_to_rounding() -> None:
    encoder = Encoder.load(cache_size=0)
    texts = ["tea with milk", "my partner Joaquin works night shifts as an ER nurse", "ok"]
    together = encoder.encode(texts)
    alone = np.vstack([encoder.encode([text]) for text in texts])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-6)


def test_concurrent_callers_get_the_serial_results(encoder: Encoder) -> None:
    texts = [f"note number {index} about the garden" for index in range(8)]
    serial = encoder.encode(texts)
    results: dict[int, np.ndarray] = {}

    def call(index: int) -> None:
        results[index] = encoder.encode(texts[index:] + texts[:index])

    threads = [threading.Thread(target=call, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index, vectors in results.items():
        np.testing.assert_allclose(vectors, np.roll(serial, -index, axis=0), atol=1e-6)


def test_default_encoder_is_loaded_once_and_runs_blas_on_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(BLAS_THREADS_VARIABLE, raising=False)
    assert default_encoder() is default_encoder()
    assert {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"} == {1}


def test_missing_weights_package_is_reported_clearly(tmp_path: Path) -> None:
    with pytest.raises(EncoderUnavailable, match="no_such_weights_package"):
        model_directory("no_such_weights_package")
    with pytest.raises(EncoderUnavailable):
        Encoder.load(tmp_path)  # a directory without the model files


@pytest.fixture(scope="module")
def int8_encoder() -> Encoder:
    return Encoder.load(cache_size=0, quantized=True)


def test_int8_columns_keep_each_columns_range() -> None:
    weight = np.array([[0.5, -0.02, 0.0], [-1.0, 0.01, 0.0], [0.25, 0.005, 0.0]], np.float32)
    values, scales = int8_columns(weight)
    assert values.dtype == np.int8 and scales.dtype == np.float32
    # Each column's largest magnitude is 127: a small column is not crushed by a large one.
    assert np.abs(values[:, :2]).max(axis=0).tolist() == [127, 127]
    assert np.all(values[:, 2] == 0) and scales[2] == 1.0  # an all-zero column stays zero
    assert np.abs(values * scales - weight).max() <= scales.max() / 2 + 1e-7


def test_the_int8_model_stays_close_to_the_reference(int8_encoder: Encoder) -> None:
    vectors = int8_encoder.encode(REFERENCE_TEXTS)
    cosines = np.sum(vectors * REFERENCE_VECTORS, axis=1) / np.linalg.norm(
        REFERENCE_VECTORS, axis=1
    )
    seen = dict(zip(REFERENCE_TEXTS, cosines.tolist(), strict=True))
    # Sentences keep 0.99 and more; "ok" and "" (two or three tokens) lose most: 0.97-0.98 on
    # a CPU with VNNI, 0.9695 on one with AVX2 alone (an AMD EPYC), whose int8 products differ.
    assert cosines.min() >= 0.96 and np.median(cosines) >= 0.99, seen
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_the_int8_model_gives_a_text_the_same_vector_in_any_batch(int8_encoder: Encoder) -> None:
    # Its activations share one quantization scale per run, so the encoder runs each text
    # alone: the vector of a text never depends on what was asked beside it.
    texts = ["tea with milk", "my partner Joaquin works night shifts as an ER nurse", "ok", ""]
    alone = np.vstack([int8_encoder.encode([text]) for text in texts])
    np.testing.assert_array_equal(int8_encoder.encode(texts), alone)
    np.testing.assert_array_equal(
        int8_encoder.encode(texts[::-1] * 3), np.tile(alone[::-1], (3, 1))
    )


def test_the_shared_encoder_is_the_int8_one(int8_encoder: Encoder) -> None:
    texts = ["The kettle is broken again.", "Book a table for four at eight."]
    np.testing.assert_array_equal(default_encoder().encode(texts), int8_encoder.encode(texts))


def test_the_int8_session_keeps_its_own_copy_of_the_weights_it_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The int8 weights are made while the graph is built and handed to the session: the
    # session must not read them once the model is built (they are freed with the graph).
    made: list[np.ndarray] = []

    def recording(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, scales = int8_columns(weight)
        made.extend((values, scales))
        return values, scales

    monkeypatch.setattr("memmesh.embedding.model.int8_columns", recording)
    model = BertModel(load_weights(model_directory()), quantized=True)
    ids = np.array([[101, 7592, 2088, 2003, 2307, 102]], dtype=np.int64)
    before = model.encode(ids, np.ones_like(ids))
    assert len(made) == 2 * 6 * 4  # values and scales of four products in six layers
    for array in made:
        array.fill(0)
    np.testing.assert_array_equal(model.encode(ids, np.ones_like(ids)), before)


def test_an_encode_under_way_when_the_cache_is_cleared_keeps_nothing() -> None:
    # An erasure clears the cache while another thread (an Upsert's, a query's) may be
    # embedding the very words it forgets: that encode must not put them back.
    encoder = Encoder.load(cache_size=8)
    uncached = encoder._encode_uncached
    started, cleared = threading.Event(), threading.Event()

    def slow(texts: list[str]) -> np.ndarray:
        started.set()
        assert cleared.wait(10)
        return uncached(texts)

    encoder._encode_uncached = slow  # type: ignore[method-assign]
    worker = threading.Thread(target=encoder.encode, args=(["my sister Ines moved to Porto"],))
    worker.start()
    assert started.wait(10)
    encoder.clear_cache()
    cleared.set()
    worker.join(10)
    assert encoder.cached_count == 0
    # Without a clearing meanwhile, the same encode keeps its vector.
    encoder.encode(["my sister Ines moved to Porto"])
    assert encoder.cached_count == 1
