"""The learned path's pure parts: rendering a clause as a fact, the softmax head, labelling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memmesh.extraction.gates import apply_gates
from memmesh.extraction.learned.extractor import four_factor_confidence_bp
from memmesh.extraction.learned.heads import SoftmaxHead, train_head
from memmesh.extraction.learned.labels import labelled_units
from memmesh.extraction.learned.render import fact_key, render_fact, strip_episodic_time
from memmesh.extraction.model import Candidate, FactType


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
        ("I really love my dog", "preference", "User really loves their dog."),
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


def test_four_factor_confidence_meets_the_user_fact_threshold_only_when_verbatim() -> None:
    assert four_factor_confidence_bp("I drive a Tesla", "oh and I drive a Tesla") == 8000
    assert four_factor_confidence_bp("I drive a Tesla", "I drive a tesla, I drive a tesla") == 9000
    assert four_factor_confidence_bp("I drive a Tesla last year", "I own a Tesla") == 7000


def test_head_learns_a_separable_problem_and_round_trips(tmp_path: Path) -> None:
    features = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]], dtype=np.float32)
    head = train_head(features, ["none", "none", "identity", "identity"], ("none", "identity"))
    probabilities = head.probabilities(features)
    assert list(probabilities.argmax(axis=1)) == [0, 0, 1, 1]
    again = train_head(features, ["none", "none", "identity", "identity"], ("none", "identity"))
    assert np.array_equal(again.weights, head.weights)  # deterministic training
    path = tmp_path / "head.npz"
    head.save(path)
    loaded = SoftmaxHead.load(path)
    assert loaded.classes == head.classes
    assert np.array_equal(loaded.probabilities(features), probabilities)


def test_labels_mark_the_clause_holding_the_fact_tokens() -> None:
    case = {
        "id": "x-1",
        "text": "ugh long day, anyway my sister Ama lives in Kumasi",
        "facts": [{"category": "relationship", "must_contain": ["sister", "ama"]}],
    }
    labels = [(u.unit.text, u.label) for u in labelled_units([case])]
    assert ("anyway my sister Ama lives in Kumasi", "relationship") in labels
    assert all(label == "none" for text, label in labels if "Ama" not in text)
