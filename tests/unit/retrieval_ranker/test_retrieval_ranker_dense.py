"""Dense retrieval beside BM25: exact integer similarities, reciprocal rank fusion, paraphrases
found by meaning without pulling unrelated memories, vectors rebuilt by Reindex."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest
from numpy.typing import NDArray
from ranker_fakes import TENANT, USER, MemoryRankerStore, atom, turn

from memmesh.embedding import default_encoder
from memmesh.embedding.static import default_static_encoder
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.domain.dense import (
    UNIT,
    DenseIndex,
    DensePolicy,
    RetrievalMode,
    fused_scores,
    int8_dots,
    quantised,
)
from memmesh.engines.retrieval_ranker.domain.documents import Caps, IndexDoc
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import UserIndex
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb

CAPS = Caps(max_atoms=20, max_turns=5, max_digests=5)
MEMORIES = {
    "fiancee": "User's fiancée Rosa teaches chemistry at the high school.",
    "volvo": "User still drives their dad's old Volvo.",
    "spicy": "Spicy food wrecks the user's stomach.",
    "dog": "User has a golden retriever named Biscuit.",
    "city": "User lives in Lisbon.",
    "passport": "User renewed their passport in March.",
    "chess": "User is learning to play chess.",
}


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer(default_static_encoder())


def _service(analyzer: Analyzer, store: MemoryRankerStore, mode: RetrievalMode) -> RankerService:
    return RankerService(store, analyzer, mapping.DocumentCodec(analyzer), mode=mode)


def _atoms(analyzer: Analyzer) -> list[IndexDoc]:
    return [
        mapping.index_doc(pb.Document(atom=atom(atom_id, text)), analyzer)
        for atom_id, text in MEMORIES.items()
    ]


def test_similarities_are_exact_integers_whatever_the_order_of_the_rows() -> None:
    rng = np.random.default_rng(5)
    vectors = [v / np.linalg.norm(v) for v in rng.normal(size=(40, 384)).astype(np.float32)]
    forward, backward = DenseIndex(), DenseIndex()
    for number, vector in enumerate(vectors):
        forward.add(number, quantised(vector))
    for number, vector in reversed(list(enumerate(vectors))):
        backward.add(number, quantised(vector))
    query = quantised(vectors[7])
    loose = DensePolicy(min_cosine_percent=-100, relative_percent=0, depth=40)
    assert forward.related(query, loose) == backward.related(query, loose)
    assert forward.related(query, loose)[0][0] == 7
    own = np.frombuffer(query, dtype=np.int8).astype(np.int64)
    assert int(own @ own) <= UNIT * 1.01


def test_the_int8_scan_gives_the_exact_dot_products_even_at_the_extremes() -> None:
    rng = np.random.default_rng(11)
    matrix = rng.integers(-127, 128, size=(300, 1040), dtype=np.int8)
    matrix[0] = 127  # the largest sum a row can reach: 1,040 x 127²
    matrix[1] = -127
    query = np.full(1040, 127, dtype=np.int8)
    query[::3] = rng.integers(-127, 128, size=len(query[::3]), dtype=np.int8)
    dots = np.empty(len(matrix), dtype=np.int32)
    int8_dots(matrix, query, dots)
    assert dots.tolist() == (matrix.astype(np.int64) @ query.astype(np.int64)).tolist()


EXCLUDE_2 = np.array([False, False, True, False, False])


def test_a_removed_or_excluded_vector_is_never_returned_and_the_others_stay() -> None:
    index = DenseIndex()
    unit = np.zeros(384, dtype=np.float32)
    for number in range(5):
        row = unit.copy()
        row[0], row[number + 1] = 0.9, 0.43
        index.add(number, quantised(row / np.linalg.norm(row)))
    index.remove(1)
    index.add(3, b"")  # a document without content loses its vector
    query = unit.copy()
    query[0] = 1.0
    assert sorted(slot for slot, _ in index.related(quantised(query))) == [0, 2, 4]
    assert sorted(slot for slot, _ in index.related(quantised(query), excluded=EXCLUDE_2)) == [
        0,
        4,
    ]
    assert len(index) == 3
    assert index.vector_of(1) == index.vector_of(3) == index.vector_of(99) == b""


def test_reciprocal_rank_fusion_favours_documents_both_rankings_agree_on() -> None:
    scores = fused_scores([[("a", 9), ("b", 8), ("c", 7)], [("c", 5), ("a", 4), ("d", 3)]])
    assert max(scores, key=lambda doc_id: scores[doc_id]) == "a"
    assert scores["a"] > scores["c"] > scores["b"] > scores["d"]
    assert scores["d"] == DensePolicy().rrf_scale // (DensePolicy().rrf_k + 3)


def test_documents_a_ranking_cannot_tell_apart_stay_equally_relevant() -> None:
    scores = fused_scores([[("a", 9), ("b", 9), ("c", 7)], [("b", 5), ("a", 5), ("c", 5)]])
    assert scores["a"] == scores["b"] > scores["c"]


@pytest.mark.parametrize(
    ("query", "found", "not_found"),
    [
        ("what my future wife does at work", "fiancee", "passport"),
        ("get the car ready for winter", "volvo", "chess"),
        ("a curry recipe", "spicy", "passport"),
        ("which city do I live in", "city", "dog"),
        ("what board game am I learning", "chess", "spicy"),
    ],
)
async def test_a_paraphrase_with_no_shared_word_is_found_by_meaning_and_an_unrelated_memory_is_not(
    analyzer: Analyzer, query: str, found: str, not_found: str
) -> None:
    store = MemoryRankerStore()
    fused = _service(analyzer, store, RetrievalMode.FUSED)
    await fused.upsert(TENANT, USER, _atoms(analyzer))
    atoms = [c.doc.doc_id for c in (await fused.retrieve(TENANT, USER, query, CAPS)).atoms]
    assert found in atoms
    assert not_found not in atoms


async def test_bm25_alone_misses_the_paraphrase_fusion_finds(analyzer: Analyzer) -> None:
    store = MemoryRankerStore()
    await _service(analyzer, store, RetrievalMode.FUSED).upsert(TENANT, USER, _atoms(analyzer))
    lexical = _service(analyzer, store, RetrievalMode.BM25)
    answer = await lexical.retrieve(TENANT, USER, "get the car ready for winter", CAPS)
    assert "volvo" not in [c.doc.doc_id for c in answer.atoms]


async def test_reindex_derives_the_same_vectors_checksum_and_answers(analyzer: Analyzer) -> None:
    store = MemoryRankerStore()
    live = _service(analyzer, store, RetrievalMode.FUSED)
    turns = [turn("t1", "we drove the Volvo to the coast", 10), turn("t2", "Rosa graded tests", 20)]
    await live.upsert(TENANT, USER, _atoms(analyzer))
    await live.upsert(
        TENANT, USER, [mapping.index_doc(pb.Document(turn=t), analyzer) for t in turns]
    )
    before = await live.describe(TENANT, USER)
    queries = ("my future wife", "the car", "a curry recipe", "what do you remember")
    answers = [await live.retrieve(TENANT, USER, q, CAPS) for q in queries]
    rebuilt = _service(analyzer, store, RetrievalMode.FUSED)
    assert await rebuilt.reindex(TENANT, USER) == before
    assert [await rebuilt.retrieve(TENANT, USER, q, CAPS) for q in queries] == answers
    stored = next(iter(store.users.values())).docs
    assert all(doc.vector for doc, _ in stored.values())


@pytest.mark.parametrize(
    ("query", "text", "key"),
    [
        ("what do I do for work", "User is an accountant.", "identity.occupation"),
        ("anniversary dinner ideas", "User's husband is Hamid.", "relationship.spouse"),
    ],
)
async def test_an_atom_is_reached_through_what_its_key_says_it_is_about(
    analyzer: Analyzer, query: str, text: str, key: str
) -> None:
    """The words of the atom's text alone are too far from the request; its key's slot
    (occupation, spouse) is not. A slot the extractor did not name says nothing."""
    found: dict[str, list[str]] = {}
    for slot_key in (key, "identity.learned.x"):
        store = MemoryRankerStore()
        service = _service(analyzer, store, RetrievalMode.FUSED)
        docs = [
            *_atoms(analyzer),
            mapping.index_doc(pb.Document(atom=atom("it", text, slot_key)), analyzer),
        ]
        await service.upsert(TENANT, USER, docs)
        answer = await service.retrieve(TENANT, USER, query, CAPS)
        found[slot_key] = [c.doc.doc_id for c in answer.atoms]
    assert "it" in found[key]
    assert "it" not in found["identity.learned.x"]


async def test_a_row_derived_another_way_gets_its_vector_derived_again(analyzer: Analyzer) -> None:
    codec = mapping.DocumentCodec(analyzer)
    doc = mapping.index_doc(
        pb.Document(atom=atom("a1", "User is an accountant.", "identity.occupation")), analyzer
    )
    stored = codec.encode(doc)
    older = replace(
        stored, vector=b"\x01" * len(stored.vector), terms="1.old " + " ".join(doc.terms)
    )
    assert codec.decode(older).vector == doc.vector
    # A row of this form keeps what it stores (derived at write time, not again at read).
    same_form = replace(stored, vector=b"\x01" * len(stored.vector))
    assert codec.decode(same_form).vector == b"\x01" * len(stored.vector)


async def test_terms_of_another_analysis_keep_the_vector_stored_beside_them(
    analyzer: Analyzer,
) -> None:
    """A new analysis of words derives the terms again but embeds nothing again (the sentence
    encoder's time over a whole history); a vector other encoders made is derived again."""
    codec = mapping.DocumentCodec(analyzer)
    doc = mapping.index_doc(
        pb.Document(turn=turn("t1", "we went camping in the Alps", 10)), analyzer
    )
    stored = codec.encode(doc)
    form, fingerprint, vectors_id = stored.terms.split(" ")[0].split(".")
    kept = b"\x01" * len(stored.vector)
    other_analysis = replace(stored, vector=kept, terms=f"{form}.000000000000.{vectors_id} x y")
    decoded = codec.decode(other_analysis)
    assert (decoded.vector, decoded.terms) == (kept, doc.terms)
    other_encoder = replace(stored, vector=kept, terms=f"{form}.{fingerprint}.none x y")
    assert (codec.decode(other_encoder).vector, codec.decode(other_encoder).terms) == (
        doc.vector,
        ("x", "y"),
    )


async def test_turns_are_embedded_by_the_sentence_encoder_and_found_by_what_they_mean() -> None:
    """A turn that shares no word with the request: the static table misses it, the sentence
    encoder (which embeds turns and requests, not atoms) finds it and nothing else."""
    said = [
        turn("t1", "I'm doing the keto thing, trying to stay under 20 carbs a day", 10),
        turn("t2", "I'm scared to death of flying", 20),
        turn("t3", "we adopted a greyhound last month", 30),
    ]
    static = Analyzer(default_static_encoder())
    both = Analyzer(default_static_encoder(), default_encoder())
    found = {}
    for name, analyzer in (("static", static), ("both", both)):
        service = _service(analyzer, MemoryRankerStore(), RetrievalMode.FUSED)
        await service.upsert(
            TENANT, USER, [mapping.index_doc(pb.Document(turn=t), analyzer) for t in said]
        )
        answer = await service.retrieve(TENANT, USER, "what diet am I following", CAPS)
        found[name] = [c.doc.doc_id for c in answer.turns]
    # The static table brings the fear of flying instead.
    assert "t1" not in found["static"]
    assert found["both"] == ["t1"]
    # Atoms keep the static table's vectors; a turn's is the encoder's (384 against 192).
    atom_doc = mapping.index_doc(
        pb.Document(atom=atom("a", "User is vegan.", "constraint.diet")), both
    )
    turn_doc = mapping.index_doc(pb.Document(turn=said[0]), both)
    assert (len(atom_doc.vector), len(turn_doc.vector)) == (192, 384)


class _KeptVectors:
    """The sentence encoder's cache as the analyzer sees it: the encoder embeds, this counts
    what it keeps and what an erasure clears."""

    def __init__(self) -> None:
        self.kept: set[str] = set()

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.kept.update(texts)
        return default_encoder().encode(texts)

    def clear_cache(self) -> None:
        self.kept.clear()


async def test_an_erasure_leaves_no_vector_of_a_forgotten_turn_kept() -> None:
    sentences = _KeptVectors()
    analyzer = Analyzer(default_static_encoder(), sentences)
    service = _service(analyzer, MemoryRankerStore(), RetrievalMode.FUSED)
    said = turn("t1", "my sister Ines moved to Porto", 10)
    await service.upsert(TENANT, USER, [mapping.index_doc(pb.Document(turn=said), analyzer)])
    assert said.text in sentences.kept
    # A Remove that is no erasure keeps them; an erasing one and a forget drop them.
    await service.remove(TENANT, USER, ["t1"])
    assert said.text in sentences.kept
    await service.upsert(TENANT, USER, [mapping.index_doc(pb.Document(turn=said), analyzer)])
    await service.remove(TENANT, USER, ["t1"], erase=True)
    assert not sentences.kept
    await service.upsert(TENANT, USER, [mapping.index_doc(pb.Document(turn=said), analyzer)])
    assert said.text in sentences.kept
    await service.forget_user(TENANT, USER)
    assert not sentences.kept


class _EncodingThreads(_KeptVectors):
    """Records which thread embedded each text."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: dict[str, str] = {}

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.threads.update((text, threading.current_thread().name) for text in texts)
        return super().encode(texts)


async def test_a_query_is_embedded_beside_the_scoring_and_answers_as_if_embedded_first() -> None:
    sentences = _EncodingThreads()
    analyzer = Analyzer(default_static_encoder(), sentences)
    service = _service(analyzer, MemoryRankerStore(), RetrievalMode.FUSED)
    said = [
        turn("t1", "I'm doing the keto thing, trying to stay under 20 carbs a day", 10),
        turn("t2", "I'm scared to death of flying", 20),
    ]
    docs = [mapping.index_doc(pb.Document(turn=t), analyzer) for t in said]
    await service.upsert(TENANT, USER, docs)
    query = "what diet am I following"
    answer = await service.retrieve(TENANT, USER, query, CAPS)
    # Embedded on the ranker's encoding thread, not on the event loop's.
    assert sentences.threads[query].startswith("query-encoder")
    index = UserIndex(1, docs)
    terms = analyzer.query_terms(query)
    computed_first = index.retrieve(
        terms, CAPS, (), analyzer.query_vectors(query), RetrievalMode.FUSED
    )
    assert answer == computed_first
    assert [c.doc.doc_id for c in answer.turns] == ["t1"]
    await service.close()
