"""Terse refusals, bare standing fragments and command phrasing families: each heard in new
words, and each beside a look-alike that must stay as it is."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.model import Command


def _facts(text: str) -> list[tuple[str, str]]:
    return [(f.category, f.text) for f in extract(text).facts]


@pytest.mark.parametrize(
    ("utterance", "fact"),
    [
        # A note's refusal with its emphasis ("…, always").
        ("Marzipan: hard pass, always.", "User doesn't like marzipan."),
        # A topic, then a refusal in its own clause.
        ("Line dancing, no thank you.", "User dislikes line dancing."),
        ("Oysters? Pass.", "User dislikes oysters."),
        ("Escape rooms, never again.", "User dislikes escape rooms."),
        ("Tripe, for me it's the worst.", "User dislikes tripe."),
        ("camping trips, for me this is like the hell", "User dislikes camping trips."),
        ("Durian, it's really not for me.", "User dislikes durian."),
        # A verdict said for the user alone.
        ("Mint with chocolate is for me awful.", "User dislikes Mint with chocolate."),
        ("stand-up comedy is a nightmare for me", "User dislikes stand-up comedy."),
        ("eh, liver is just never going to happen for me", "User dislikes liver."),
        ("timeshares just aren't me", "User dislikes timeshares."),
        ("the one thing I can't stand is loud chewing", "User dislikes loud chewing."),
        ("beetroot and I just don't get along", "User dislikes beetroot."),
        # A taste turned down with "don't do".
        ("I don't do spicy stuff, ever", "User does not do spicy stuff."),
    ],
)
def test_a_terse_or_unusual_refusal_is_a_dislike(utterance: str, fact: str) -> None:
    assert ("preference", fact) in _facts(utterance)


@pytest.mark.parametrize(
    "utterance",
    [
        # An offer turned down for now, with its reason.
        "Tea? No thank you, I just had one.",
        "Pudding? No thanks, I'm stuffed.",
        # A verdict on the user's own things, on a pronoun, or said of no one.
        "my commute is a nightmare for me",
        "this is terrible for me",
        "the traffic is awful",
        # What will not happen is no taste.
        "the meeting is not going to happen",
        "the merger is never going to happen",
        # People the user does not get along with are no taste.
        "my sister and I just don't get along",
        # The topic clause says more than a topic.
        "the job, it's just not for me right now",
    ],
)
def test_a_look_alike_of_a_refusal_holds_no_dislike(utterance: str) -> None:
    assert not [f for f in extract(utterance).facts if f.text.startswith("User dislikes")]


def test_a_limit_said_with_do_stays_a_limit() -> None:
    assert _facts("I can't do spicy food") == [("constraint", "User can't do spicy food.")]
    assert _facts("I don't do dairy") == [("constraint", "User does not do dairy.")]


def test_a_dislike_that_follows_from_a_limit_is_not_a_taste() -> None:
    facts = _facts("I get seasick easily, so sailing is just the worst for me")
    assert not [text for _, text in facts if text.startswith("User dislikes")]


@pytest.mark.parametrize(
    ("utterance", "fact"),
    [
        ("Imperial units.", ("constraint", "User always uses imperial units.")),
        ("Fahrenheit.", ("constraint", "User always uses fahrenheit.")),
        ("Ounces, not grams.", ("constraint", "User always uses ounces.")),
        ("12-hour clock, please.", ("constraint", "User always uses 12-hour clock.")),
        ("Brief answers.", ("constraint", "User prefers brief answers.")),
        ("Bullet points, please.", ("constraint", "User prefers bullet points.")),
        ("Originally from Peru.", ("identity", "User is from Peru.")),
        ("Paleo.", ("constraint", "User is paleo.")),
    ],
)
def test_a_bare_standing_fragment_is_a_fact(utterance: str, fact: tuple[str, str]) -> None:
    assert fact in _facts(utterance)


@pytest.mark.parametrize(
    "utterance",
    [
        # A unit name alone answers a question as often as it states a choice.
        "Pounds.",
        "Dollars.",
        # "From" a day or a start is no origin.
        "From Monday.",
        "From scratch.",
        # A diet named in a list of things tried is no diet of the user's.
        "I tried everything, keto, paleo, whatever, none of it stuck.",
    ],
)
def test_a_bare_look_alike_is_no_fact(utterance: str) -> None:
    assert not [f for f in extract(utterance).facts if f.category in ("constraint", "identity")], (
        utterance
    )


@pytest.mark.parametrize(
    ("utterance", "command"),
    [
        ("No auto-resume, please.", Command.RECALL_ONLY_IF_ASKED),
        ("kindly erase all my informations", Command.FORGET_EVERYTHING),
        ("clear out all my data and start over", Command.FORGET_EVERYTHING),
        ("could we carry on with the wedding budget thread", Command.RESUME_THREAD),
        ("let's dive back into the band name brainstorm", Command.RESUME_THREAD),
        ("please retire the subject of my divorce", Command.DO_NOT_MENTION),
        ("stop recommending steakhouses, I'm vegetarian", Command.DO_NOT_MENTION),
        ("that bit's not for the memory banks, my brother is in rehab", Command.DO_NOT_STORE),
        ("my credit score, you raise it only when I request", Command.PULL_ONLY),
        ("I have bipolar disorder; keep that in reserve unless I bring it up", Command.PULL_ONLY),
        ("I'd rather you didn't bring that up by yourself", Command.PULL_ONLY),
        ("Honestly, this whole chat about the audit - ditch it", Command.FORGET_THREAD),
        ("ok so could you just erase all that from your memory", Command.FORGET),
        ("can you remove whatever you stored about it", Command.FORGET),
        ("keep it all to yourself unless I ask", Command.RECALL_ONLY_IF_ASKED),
        (
            "That conversation about the new bike? I'd like to pick up on that one.",
            Command.RESUME_THREAD,
        ),
    ],
)
def test_a_command_family_is_heard_in_new_words(utterance: str, command: Command) -> None:
    assert extract(utterance).command is command


@pytest.mark.parametrize(
    "utterance",
    [
        "this one is not for the files I sent you yesterday",
        "the one I binned was the blue one",
        "can we carry on with dinner plans later",
        "I keep it all to myself",
        "No way, that's not for me",
    ],
)
def test_a_look_alike_of_a_command_is_none(utterance: str) -> None:
    assert extract(utterance).command is None


def test_a_terse_resume_states_no_fact() -> None:
    result = default_hybrid_extractor().extract("Continue: kitchen remodel.")
    assert result.command is Command.RESUME_THREAD
    assert result.facts == ()
