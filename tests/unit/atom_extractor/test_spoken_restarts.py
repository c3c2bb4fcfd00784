"""A spoken restart says the same words twice; the rules read them once."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.model import Command
from memmesh.extraction.text import normalize, split_clauses


@pytest.mark.parametrize(
    "said, read",
    [
        ("my uh my doctor is Dr Okafor", "my doctor is Dr Okafor"),
        ("delete what i told you about my about my diet", "delete what I told you about my diet"),
        ("it was very very good", "it was very good"),
        # Words that may be meant twice stay.
        ("I know that that is true", "I know that that is true"),
        ("I had had enough", "I had had enough"),
        # Quoted words in a row repeat only their quote marks.
        (
            "Not 'sleep apnea', 'sleep paralysis'. Very different things.",
            "Not 'sleep apnea', 'sleep paralysis'. Very different things.",
        ),
    ],
)
def test_a_restart_is_read_once(said, read):
    assert normalize(said) == read


def test_a_command_said_with_a_restart_is_heard():
    result = extract("forget this um this thread like the whole thing about the car loan")
    assert result.command is Command.FORGET_THREAD


@pytest.mark.parametrize(
    "said, clauses",
    [
        # Unpunctuated speech: a bare "I" and a verb of habit or state start a new clause.
        (
            "how do i get to the stadium from here without stairs i walk with a cane",
            ["how do I get to the stadium from here without stairs", "I walk with a cane"],
        ),
        (
            "can you find me a recipe for dinner i don't eat pork",
            ["can you find me a recipe for dinner", "I don't eat pork"],
        ),
        # "we" as well: what a household keeps to.
        (
            "can you help me plan meals for the week we keep halal at home",
            ["can you help me plan meals for the week", "we keep halal at home"],
        ),
        # "I've" and a verb of what has long held.
        (
            "what time does the pharmacy close i gotta grab my inhaler refill i've had asthma",
            [
                "what time does the pharmacy close I got to grab my inhaler refill",
                "I've had asthma",
            ],
        ),
        ("the therapist i've been seeing is great", ["the therapist I've been seeing is great"]),
        # A lead adverb between "and" and the subject.
        (
            "I am diabetic since twenty years and also I take pills for the cholesterol",
            ["I am diabetic since twenty years", "I take pills for the cholesterol"],
        ),
        # A request after "and" is a clause of its own.
        (
            "i am deaf and uh please always give me transcripts",
            ["I am deaf", "please always give me transcripts"],
        ),
        # Bound to the words before it, the "I" stays in its clause.
        ("the way I walk is odd", ["the way I walk is odd"]),
        ("the food that we eat is bland", ["the food that we eat is bland"]),
        ("everything I eat is bland", ["everything I eat is bland"]),
    ],
)
def test_a_run_on_turn_is_read_clause_by_clause(said, clauses):
    assert [c.text for c in split_clauses(normalize(said))] == clauses


def test_a_limit_said_after_a_request_without_a_stop_is_kept():
    facts = extract("can you find me a recipe for dinner i don't eat pork").facts
    assert [f.text for f in facts] == ["User does not eat pork."]


@pytest.mark.parametrize(
    "said, statement",
    [
        ("went to the aquarium and i had to skip the tunnel im claustrophobic", "claustrophobic"),
        ("can you help me plan meals for the week we keep halal at home", "halal"),
        ("I'm hypoglycemic so I always carry snacks", "hypoglycemic"),
        ("I'm bipolar. Mention only if asked.", "bipolar"),
    ],
)
def test_a_condition_said_in_passing_is_a_standing_constraint(said, statement):
    constraints = [f.text.lower() for f in extract(said).facts if f.category == "constraint"]
    assert len(constraints) == 1 and statement in constraints[0]


@pytest.mark.parametrize(
    "said, read",
    [
        # "like" before "so" is a filler, but not after its subject or a negation, where the
        # degree before the object goes.
        ("we waited like so long", "we waited so long"),
        ("I don't like so much the jazz music", "I don't like the jazz music"),
        ("I like very much the old songs", "I like the old songs"),
        ("I like so much when it rains", "I like so much when it rains"),
    ],
)
def test_like_before_so_is_a_verb_after_its_subject(said, read):
    assert normalize(said) == read
