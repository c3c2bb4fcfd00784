"""The learned path's pure parts: rendering a clause as a fact, the softmax head, labelling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memmesh.embedding import default_encoder
from memmesh.extraction.gates import apply_gates
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.extractor import (
    _places_the_fact_before,
    _tells_no_state,
    four_factor_confidence_bp,
)
from memmesh.extraction.learned.heads import (
    HiddenLayerHead,
    SoftmaxHead,
    train_head,
    train_hidden_layer_head,
)
from memmesh.extraction.learned.labels import labelled_units
from memmesh.extraction.learned.lexical import (
    ClauseHeads,
    LexicalHead,
    clause_tokens,
    hashed_tokens,
    text_tokens,
    train_lexical_head,
)
from memmesh.extraction.learned.render import fact_key, render_fact, strip_episodic_time
from memmesh.extraction.learned.units import Unit, is_fragment_tail, turn_units, unit_features
from memmesh.extraction.model import Candidate, FactType
from memmesh.extraction.text import normalize


@pytest.mark.parametrize(
    ("clause", "category", "expected"),
    [
        ("I went vegetarian about a year ago", "constraint", "User went vegetarian."),
        ("I drive a Tesla", "identity", "User drives a Tesla."),
        ("I'm afraid of flying", "constraint", "User is afraid of flying."),
        (
            "my partner Joaquin works night shifts as an ER nurse",
            "relationship",
            "User's partner Joaquin works night shifts as an ER nurse.",
        ),
        ("we moved to Denver in March", "identity", "User's household moved to Denver."),
        ("we keep halal at home", "constraint", "User's household keeps halal at home."),
        ("we don't eat pork", "constraint", "User's household doesn't eat pork."),
        ("I really love my dog", "preference", "User really loves their dog."),
        ("I never ever drink fizzy drinks", "preference", "User never ever drinks fizzy drinks."),
        ("I have asthma, eczema as well", "constraint", "User has asthma, eczema."),
        (
            "cilantro tastes like soap to me",
            "preference",
            "User's taste: cilantro tastes like soap to them.",
        ),
    ],
)
def test_render_fact_speaks_of_the_user_in_their_own_words(
    clause: str, category: str, expected: str
) -> None:
    assert render_fact(clause, category) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we adopted a greyhound last month", "we adopted a greyhound"),
        ("I quit smoking about two years ago", "I quit smoking"),
        ("we moved here in early March 2023", "we moved here"),
        ("I've lived in Lisbon since 2019", "I've lived in Lisbon"),
        ("I love jazz", "I love jazz"),
    ],
)
def test_episodic_time_phrases_are_cut(text: str, expected: str) -> None:
    assert strip_episodic_time(text) == expected


def test_rendered_facts_pass_the_seed_002_gates() -> None:
    source = "quick thing, I went vegetarian about a year ago and cilantro tastes like soap to me"
    candidates = [
        Candidate(
            text=render_fact(clause, category),
            category=category,
            type=FactType.USER_FACT,
            confidence_bp=four_factor_confidence_bp(clause, source),
            key=fact_key(category, render_fact(clause, category)),
            evidence_span=clause,
        )
        for clause, category in (
            ("I went vegetarian about a year ago", "constraint"),
            ("cilantro tastes like soap to me", "preference"),
        )
    ]
    accepted, rejections = apply_gates(candidates, source)
    assert [f.text for f in accepted] == [c.text for c in candidates], rejections


def test_a_time_phrase_after_a_rules_fact_places_it_and_holds_no_fact_of_its_own() -> None:
    units = turn_units(normalize("I'm retired, finally, after thirty years of teaching"))
    assert [u.text for u in units][2] == "after thirty years of teaching"
    # The rule's fact is the first clause; "finally" completes it.
    assert _places_the_fact_before(units, 2, covered={0}, tails={1})
    assert not _places_the_fact_before(units, 2, covered=set(), tails={1})
    mine = turn_units(normalize("I'm retired, finally, after I sold my shop"))
    assert not _places_the_fact_before(mine, 2, covered={0}, tails={1})


def test_four_factor_confidence_meets_the_user_fact_threshold_only_when_verbatim() -> None:
    assert four_factor_confidence_bp("I drive a Tesla", "oh and I drive a Tesla") == 8000
    assert four_factor_confidence_bp("I drive a Tesla", "I drive a tesla, I drive a tesla") == 9000
    assert four_factor_confidence_bp("I drive a Tesla last year", "I own a Tesla") == 7000


@pytest.mark.parametrize(
    ("train", "kind"),
    [(train_head, SoftmaxHead), (train_hidden_layer_head, HiddenLayerHead)],
)
def test_a_head_learns_a_separable_problem_and_round_trips(
    tmp_path: Path,
    train: Callable[..., SoftmaxHead | HiddenLayerHead],
    kind: type[SoftmaxHead | HiddenLayerHead],
) -> None:
    features = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]], dtype=np.float32)
    labels = ["none", "none", "identity", "identity"]
    head = train(features, labels, ("none", "identity"))
    probabilities = head.probabilities(features)
    assert list(probabilities.argmax(axis=1)) == [0, 0, 1, 1]
    again = train(features, labels, ("none", "identity"))
    assert np.array_equal(again.probabilities(features), probabilities)  # deterministic
    path = tmp_path / "head.npz"
    head.save(path)
    loaded = kind.load(path)
    assert loaded.classes == head.classes
    assert np.array_equal(loaded.probabilities(features), probabilities)


def test_the_hidden_layer_learns_what_no_linear_head_can() -> None:
    # Exclusive or: the class depends on the two features together.
    features = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    labels = ["none", "none", "identity", "identity"]
    hidden = train_hidden_layer_head(features, labels, ("none", "identity"), steps=500)
    assert list(hidden.probabilities(features).argmax(axis=1)) == [0, 0, 1, 1]
    linear = train_head(features, labels, ("none", "identity"))
    assert list(linear.probabilities(features).argmax(axis=1)) != [0, 0, 1, 1]


LEXICAL_CLASSES = ("none", "preference", "constraint")
LEXICAL_TRAINING = [
    ("I drink oat milk", "preference"),
    ("I love oat milk", "preference"),
    ("I can't have gluten", "constraint"),
    ("I can't have dairy", "constraint"),
    ("I drank a coffee this morning", "none"),
    ("what's the weather like", "none"),
]


def _units(texts: list[str]) -> list[Unit]:
    return [turn_units(normalize(t))[0] for t in texts]


def _tokens(texts: list[str]) -> list[list[str]]:
    return [clause_tokens(unit) for unit in _units(texts)]


def test_the_lexical_head_reads_the_deciding_words_and_round_trips(tmp_path: Path) -> None:
    texts, labels = zip(*LEXICAL_TRAINING, strict=True)
    head = train_lexical_head(_tokens(list(texts)), list(labels), LEXICAL_CLASSES)
    assert list(head.probabilities(_tokens(list(texts))).argmax(axis=1)) == [1, 1, 2, 2, 0, 0]
    unseen = _tokens(["I really can't have shellfish", "I drink green tea"])
    assert [LEXICAL_CLASSES[i] for i in head.probabilities(unseen).argmax(axis=1)] == [
        "constraint",
        "preference",
    ]
    again = train_lexical_head(_tokens(list(texts)), list(labels), LEXICAL_CLASSES)
    assert np.array_equal(again.weights, head.weights)  # deterministic
    path = tmp_path / "lexical.npz"
    head.save(path)
    loaded = LexicalHead.load(path)
    assert loaded.classes == head.classes
    assert np.array_equal(loaded.rows, head.rows) and loaded.rows.dtype == np.int64
    assert np.array_equal(loaded.probabilities(unseen), head.probabilities(unseen))


def test_only_the_buckets_training_reached_add_to_a_clause() -> None:
    tokens = text_tokens("I drink oat milk")
    buckets = hashed_tokens(tokens)
    reached = np.array([buckets[1], (1 << 20) + 7], dtype=np.int64)  # one of the clause's, one not
    head = LexicalHead(
        ("none", "preference"),
        reached,
        np.array([[0.0, 2.0], [5.0, 0.0]], dtype=np.float32),
        np.array([0.5, 0.0], dtype=np.float32),
    )
    expected = np.exp([0.5, 2.0]) / np.exp([0.5, 2.0]).sum()
    assert np.allclose(head.probabilities([tokens])[0], expected, atol=1e-6)


def test_the_clause_heads_average_the_embedding_heads_and_the_lexical_head() -> None:
    encoder = default_encoder()
    texts, labels = zip(*LEXICAL_TRAINING, strict=True)
    units = _units(list(texts))
    features = unit_features(units, encoder)
    linear = train_head(features, list(labels), LEXICAL_CLASSES)
    hidden = train_hidden_layer_head(features, list(labels), LEXICAL_CLASSES)
    lexical = train_lexical_head(_tokens(list(texts)), list(labels), LEXICAL_CLASSES)
    averaged = ClauseHeads((linear, hidden), lexical).probabilities(units, encoder)
    expected = (
        linear.probabilities(features)
        + hidden.probabilities(features)
        + 0.5 * lexical.probabilities(_tokens(list(texts)))
    ) / 2.5
    assert np.allclose(averaged, expected, atol=1e-6)


def test_labels_mark_the_clause_holding_the_fact_tokens() -> None:
    case = {
        "id": "x-1",
        "text": "ugh long day, anyway my sister Ama lives in Kumasi",
        "facts": [{"category": "relationship", "must_contain": ["sister", "ama"]}],
    }
    labels = [(u.unit.text, u.label) for u in labelled_units([case])]
    assert ("anyway my sister Ama lives in Kumasi", "relationship") in labels
    assert all(label == "none" for text, label in labels if "Ama" not in text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("um so yeah can you like forget it", "can you forget it"),
        ("you know what I said? yeah forget that", "what I said? forget that"),
        ("so, I live in Denver. So I'm vegan", "I live in Denver. I'm vegan"),
        ("yeah.", "yeah."),
        ("would you like coffee", "would you like coffee"),
    ],
)
def test_normalize_drops_openers_and_a_like_before_a_request_verb(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("clause", "tells_no_state"),
    [
        ("directions to the nearest pharmacy", True),
        ("convert this recipe to metric for me", True),
        ("sprained my wrist", True),
        ("got stung by a wasp in the garden", True),
        # A subject later on: a run-on that goes on to state something.
        ("set an alarm for five I work early shifts at the bakery", False),
        # Past forms that tell a lasting state.
        ("born in Lagos", False),
        ("married for ten years", False),
        ("left-handed", False),
        ("I sprained my wrist", False),
    ],
)
def test_requests_and_subjectless_events_tell_no_state(clause: str, tells_no_state: bool) -> None:
    assert _tells_no_state(clause) is tells_no_state


def test_a_short_lowercase_fragment_completes_the_clause_before_it() -> None:
    units = turn_units("PhD student, linguistics. I live in Pune, born and raised, I love it")
    texts = [u.text for u in units]
    tails = [is_fragment_tail(unit, units[i - 1] if i else None) for i, unit in enumerate(units)]
    assert dict(zip(texts, tails, strict=True)) == {
        "PhD student": False,
        "linguistics": True,
        "I live in Pune": False,
        "born and raised": True,
        "I love it": False,
    }


def test_learned_facts_skip_requests_and_one_off_events() -> None:
    extractor = default_hybrid_extractor()
    for text in ("directions to the nearest pharmacy", "sprained my wrist, so no climbing"):
        assert extractor.extract(text).facts == ()


def test_the_engines_embedded_extractor_drops_the_encoders_vectors_when_told() -> None:
    from memmesh.embedding import Encoder, default_encoder
    from memmesh.engines.atom_extractor.main import embedded_extractor
    from memmesh.engines.atom_extractor.settings import AtomExtractorSettings

    extractor = embedded_extractor(AtomExtractorSettings())
    encoder = default_encoder()
    default_hybrid_extractor().extract("my sister Ines moved to Porto last spring")
    assert encoder.cached_count > 0
    # A turn the rules hear no command in is read by the command reader, which keeps its own.
    commands = default_hybrid_extractor().commands
    assert commands is not None and isinstance(commands.reader, Encoder)
    default_hybrid_extractor().extract("drop the stuff on my old job please")
    assert commands.reader.cached_count > 0
    extractor.forget_cached()
    assert encoder.cached_count == 0
    assert commands.reader.cached_count == 0
