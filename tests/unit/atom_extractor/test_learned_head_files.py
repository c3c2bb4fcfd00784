"""The learned head shipped in the package: it loads, it is what training on the dev split
gives, and the hybrid extractor built on it reads natural speech the rules alone miss."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memmesh.embedding import default_encoder
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.commands import learned_target
from memmesh.extraction.learned.heads import HiddenLayerHead, SoftmaxHead
from memmesh.extraction.learned.labels import CLASSES
from memmesh.extraction.learned.lexical import LexicalHead, clause_tokens
from memmesh.extraction.learned.model_files import (
    CLAUSE_HEAD_PATH,
    CLAUSE_HIDDEN_HEAD_PATH,
    CLAUSE_LEXICAL_HEAD_PATH,
)
from memmesh.extraction.learned.train import train_clause_head
from memmesh.extraction.learned.units import feature_width
from memmesh.extraction.model import Command
from memmesh.extraction.rules import extract as extract_by_rules
from memmesh.extraction.text import normalize

DEV_SPLIT = Path(__file__).parents[3] / "fixtures" / "extraction" / "dev.jsonl"


def test_the_shipped_head_loads_with_the_feature_width_of_the_encoder() -> None:
    head = SoftmaxHead.load(CLAUSE_HEAD_PATH)
    assert head.classes == CLASSES
    assert head.weights.shape == (feature_width(default_encoder().dimension), len(CLASSES))


# The encoder's int8 products round differently on CPUs with and without VNNI (AVX2's
# 16-bit pair sums saturate), so the embedding heads retrained on another kind of CPU differ
# a little: 0.985-0.989 of the dev split's clauses read alike between an AVX2 host and the
# one the heads were trained on. The lexical head reads words only and must match exactly.
SAME_READING_ACROSS_CPUS = 0.97


def test_the_shipped_heads_are_what_training_on_the_dev_split_gives() -> None:
    trained = train_clause_head([DEV_SPLIT], default_encoder())
    shipped_lexical = LexicalHead.load(CLAUSE_LEXICAL_HEAD_PATH)
    assert np.array_equal(trained.lexical_head.rows, shipped_lexical.rows)
    assert np.allclose(trained.lexical_head.weights, shipped_lexical.weights, atol=1e-3)
    tokens = [clause_tokens(e.unit) for e in trained.examples]
    assert (
        trained.lexical_head.probabilities(tokens).argmax(axis=1)
        == shipped_lexical.probabilities(tokens).argmax(axis=1)
    ).all()
    shipped = SoftmaxHead.load(CLAUSE_HEAD_PATH)
    shipped_hidden = HiddenLayerHead.load(CLAUSE_HIDDEN_HEAD_PATH)
    for retrained, kept in ((trained.head, shipped), (trained.hidden_layer_head, shipped_hidden)):
        agreement = (
            retrained.probabilities(trained.features).argmax(axis=1)
            == kept.probabilities(trained.features).argmax(axis=1)
        ).mean()
        assert agreement >= SAME_READING_ACROSS_CPUS


@pytest.mark.parametrize(
    ("utterance", "category", "token"),
    [
        ("I speak Portuguese and a bit of French", "identity", "portuguese"),
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


@pytest.mark.parametrize(
    ("utterance", "command", "target"),
    [
        ("drop the stuff on my old job please", Command.FORGET, "old job"),
        ("please stop raising my weight", Command.DO_NOT_MENTION, "weight"),
        ("go back to the garden plans please", Command.RESUME_THREAD, "garden plans"),
        # Heard only once the turn's words are seen to speak of memory at all.
        (
            "This whole conversation, throw it away please, like it never happened.",
            Command.FORGET_THREAD,
            None,
        ),
        (
            "can we uh pick up that thing about the garden shed from yesterday",
            Command.RESUME_THREAD,
            "garden shed",
        ),
        # Less sure, the head is heard when the turn says what the command does.
        ("Read back my profile.", Command.RECALL_SUMMARY, None),
        ("what's actually stored in your head about me these days?", Command.RECALL_SUMMARY, None),
        # A learner's "when I am asking" and a terse "if asked" say it too.
        (
            "My savings trouble, only when I am asking, not other times.",
            Command.PULL_ONLY,
            "savings trouble",
        ),
        # The topic may stand alone before the request.
        ("Dad's surgery. Mention if asked.", Command.PULL_ONLY, "Dad's surgery"),
        ("clean slate, all of it, gone", Command.FORGET_EVERYTHING, None),
        # Asked-only recall is said with "ask" or "remind", not with memory words.
        (
            "old topics, don't start them on your own, wait until I ask",
            Command.RECALL_ONLY_IF_ASKED,
            None,
        ),
        # More of each command's own words: a picture formed of the user, a record refused, a
        # conversation named to go on with, a way of speaking dropped, nothing unprompted.
        ("what's the picture you've formed of me by now?", Command.RECALL_SUMMARY, None),
        ("Unrecorded please: I'm seeing a therapist.", Command.DO_NOT_STORE, None),
        (
            "we chatted last week about my thesis, can we carry on with it?",
            Command.RESUME_THREAD,
            "thesis",
        ),
        (
            "forget the way I told you to talk to me, just speak normally",
            Command.FORGET_TONE,
            None,
        ),
        (
            "Memory in general: passive mode, nothing unprompted.",
            Command.RECALL_ONLY_IF_ASKED,
            None,
        ),
        ("Scrub everything. Pretend we never talked.", Command.FORGET_EVERYTHING, None),
    ],
)
def test_the_command_head_hears_wordings_the_rules_miss(
    utterance: str, command: Command, target: str | None
) -> None:
    assert extract_by_rules(utterance).command is None
    result = default_hybrid_extractor().extract(utterance)
    assert (result.command, result.command_target) == (command, target)


@pytest.mark.parametrize(
    "utterance",
    [
        # Reported speech and the user's own resolve are told of, not asked of the assistant.
        "my brother keeps telling me to forget about her",
        "I should stop bringing up my ex so much",
        "my mom said I should forget him",
        # What the user or the assistant said is not reported speech, nor is it a command.
        "you said you'd remind me about the dentist",
        "I asked my boss about the raise today",
        "can you remind me what I asked you yesterday",
        # Going back somewhere or going on later is no resume; a grocery list is an app's.
        "let's go back to the hotel",
        "can we continue tomorrow",
        "delete the grocery list",
        "delete the files in my downloads folder",
        # A chat and a dropped price, a reset router, a brother asked: told of, not asked for.
        "the chat with my landlord went fine, he'll drop the rent",
        "we did a full reset of the router, all of it",
        "my brother only calls when asked",
        # How thanks are answered, not a topic to avoid.
        "Don't mention it.",
        # No word of remembering, erasing, mentioning or going back.
        "my wife Ana is a nurse, so she's the one to ask about kid stuff",
        "I keep my passport in the drawer",
        "save this recipe to my favourites",
        # A phone's or an app's things to delete are a task, not memory.
        "please delete my last text to Sam and clear the timer",
        # A chat planned, a reply promised, a question put, a limit on food, a photo: no
        # conversation to resume, nothing of memory.
        "Let's find a time to chat, I'll get back to you.",
        "Can we say you're back to coding again?",
        "Do you have any suggestions for the trip?",
        "Sesame sends me to the ER. Never suggest it.",
        "my daughter took a picture of me at the beach",
        "enough about me, how was your trip?",
    ],
)
def test_the_command_head_stays_silent_on_ordinary_speech(utterance: str) -> None:
    assert default_hybrid_extractor().extract(utterance).command is None


def test_a_command_the_head_hears_leaves_the_other_sentences_to_fact_mining() -> None:
    commands = default_hybrid_extractor().commands
    assert commands is not None
    found = commands.detect(normalize("I'm vegan. Please stop raising my weight."))
    assert found.command is Command.DO_NOT_MENTION
    assert found.fact_text == "I'm vegan."


def test_a_one_sentence_command_leaves_what_the_user_says_of_themselves_to_fact_mining() -> None:
    result = default_hybrid_extractor().extract(
        "okay um give me a rundown of like everything you've saved about me and uh also "
        "i'm allergic to penicillin put that in there"
    )
    assert result.command is Command.RECALL_SUMMARY
    assert [f.category for f in result.facts if "penicillin" in f.text] == ["constraint"]


@pytest.mark.parametrize(
    ("sentence", "topic"),
    [
        ("delete the allergy note", "allergy"),
        ("enough with the diet talk, leave it", "diet"),
        ("I'd appreciate it if you didn't raise the wedding again", "wedding"),
        ("don't keep any of this", None),
    ],
)
def test_a_learned_command_names_its_topic_from_the_turn(sentence: str, topic: str | None) -> None:
    assert learned_target(sentence) == topic


@pytest.mark.parametrize(
    ("utterance", "target"),
    [
        ("my divorce, you can keep it, but only talk about it when I ask", "divorce"),
        ("my credit card debt, keep it on ice unless I bring it up", "credit card"),
    ],
)
def test_a_topic_the_rules_hear_only_as_it_is_named_as_the_heads_commands_name_theirs(
    utterance: str, target: str
) -> None:
    assert extract_by_rules(utterance).command_target is None
    result = default_hybrid_extractor().extract(utterance)
    assert (result.command, result.command_target) == (Command.PULL_ONLY, target)
