"""The learned head shipped in the package: it loads, it is what training on the dev split
gives, and the hybrid extractor built on it reads natural speech the rules alone miss."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memmesh.embedding import default_encoder
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.heads import SoftmaxHead
from memmesh.extraction.learned.labels import CLASSES
from memmesh.extraction.learned.model_files import CLAUSE_HEAD_PATH
from memmesh.extraction.learned.train import train_clause_head
from memmesh.extraction.learned.units import feature_width
from memmesh.extraction.rules import extract as extract_by_rules

DEV_SPLIT = Path(__file__).parents[3] / "fixtures" / "extraction" / "dev.jsonl"


def test_the_shipped_head_loads_with_the_feature_width_of_the_encoder() -> None:
    head = SoftmaxHead.load(CLAUSE_HEAD_PATH)
    assert head.classes == CLASSES
    assert head.weights.shape == (feature_width(default_encoder().dimension), len(CLASSES))


def test_the_shipped_head_is_what_training_on_the_dev_split_gives() -> None:
    trained = train_clause_head([DEV_SPLIT], default_encoder())
    retrained, features = trained.head, trained.features
    shipped = SoftmaxHead.load(CLAUSE_HEAD_PATH)
    assert np.allclose(retrained.weights, shipped.weights, atol=1e-3)
    agreement = (
        retrained.probabilities(features).argmax(axis=1)
        == shipped.probabilities(features).argmax(axis=1)
    ).mean()
    assert agreement == 1.0


@pytest.mark.parametrize(
    ("utterance", "category", "token"),
    [
        ("I drive a Tesla, had it for years", "constraint", "tesla"),
        ("I'm terrified of flying", "constraint", "flying"),
        ("cilantro tastes like soap to me", "preference", "cilantro"),
    ],
)
def test_the_hybrid_extractor_reads_speech_the_rules_miss(
    utterance: str, category: str, token: str
) -> None:
    facts = default_hybrid_extractor().extract(utterance).facts
    assert any(token in f.text.lower() and f.category == category for f in facts), facts
    assert extract_by_rules(utterance).facts == ()


@pytest.mark.parametrize(
    "utterance",
    [
        "what's the weather like in Oslo tomorrow",
        "if I won the lottery I'd buy a boat",
        "maybe I kinda like jazz, not sure",
        "set a timer for ten minutes",
    ],
)
def test_the_hybrid_extractor_keeps_nothing_from_non_durable_talk(utterance: str) -> None:
    assert default_hybrid_extractor().extract(utterance).facts == ()
    assert extract_by_rules(utterance).facts == ()


def test_the_hybrid_extractor_is_deterministic() -> None:
    utterance = "my partner Joaquin works nights as an ER nurse and I went vegan last year"
    first = default_hybrid_extractor().extract(utterance)
    assert all(default_hybrid_extractor().extract(utterance) == first for _ in range(3))


@pytest.mark.parametrize(
    "utterance",
    ["honestly I can't stand them", "yeah we have lived there for ages", "I take those every day"],
)
def test_a_learned_clause_naming_its_subject_elsewhere_gives_no_fact(utterance: str) -> None:
    # "them", "there", "those" stand for something of another clause or turn: a fact of this
    # clause alone would store "User can't stand them".
    assert default_hybrid_extractor().extract(utterance).facts == ()


@pytest.mark.parametrize(
    "utterance",
    [
        "my coworker can't eat anything with soy, poor guy",
        "some guy at the gym told me he used to be a stuntman",
        "my friend from work, his wife is a vegetarian",
    ],
)
def test_news_about_nobody_in_particular_gives_no_relationship_fact(utterance: str) -> None:
    # Labelling rule 4: neither named nor one of a kind in the user's life.
    facts = default_hybrid_extractor().extract(utterance).facts
    assert [f for f in facts if f.category == "relationship"] == []
