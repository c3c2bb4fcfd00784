"""A memory command wrapped in politeness or said in a learner's word order is heard as the
plain request it wraps; the same wrappers around ordinary requests stay ordinary."""

import pytest

from memmesh.extraction import Command
from memmesh.extraction.commands import detect_command
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.model import ExtractionResult
from memmesh.extraction.polite import plain_request


def extract(text: str) -> ExtractionResult:
    return default_hybrid_extractor().extract(text)


@pytest.mark.parametrize(
    "text, plain",
    [
        ("would you mind erasing my old address", "please erase my old address"),
        ("do you mind not keeping this one", "please don't keep this one"),
        (
            "I'd really appreciate it if you didn't raise my debts",
            "please don't raise my debts",
        ),
        (
            "I would be grateful if you stopped mentioning the divorce",
            "please stop mentioning the divorce",
        ),
        ("it would help if you could forget my pin", "please forget my pin"),
        ("Delete please the note on my knee", "please Delete the note on my knee"),
        ("please stop to remind me of the diet", "please stop reminding me of the diet"),
        ("please, you don't talk about my ex", "please don't talk about my ex"),
        # No wrapper, or one around no request of memory: as said.
        ("I don't mind forgetting the past", "I don't mind forgetting the past"),
        ("would you mind opening the window", "would you mind opening the window"),
    ],
)
def test_a_polite_wrapper_is_said_as_the_plain_request(text: str, plain: str) -> None:
    assert plain_request(text) == plain


@pytest.mark.parametrize(
    "text, command, target",
    [
        (
            "would you mind wiping what I told you about my landlord dispute",
            Command.FORGET,
            "landlord dispute",
        ),
        ("Would you mind not saving any of this?", Command.DO_NOT_STORE, None),
        (
            "I'd truly appreciate it if you didn't bring up my redundancy again",
            Command.DO_NOT_MENTION,
            "redundancy",
        ),
        (
            "I'd prefer it if you stopped mentioning my old flat",
            Command.DO_NOT_MENTION,
            "old flat",
        ),
        ("Erase please what I said about the lawsuit", Command.FORGET, "lawsuit"),
        (
            "please, you don't speak anymore about my car crash",
            Command.DO_NOT_MENTION,
            "car crash",
        ),
        ("please stop to mention my weight, thanks", Command.DO_NOT_MENTION, "weight"),
    ],
)
def test_a_polite_or_learner_command_is_heard(
    text: str, command: Command, target: str | None
) -> None:
    result = extract(text)
    assert (result.command, result.command_target) == (command, target)


@pytest.mark.parametrize(
    "text, target",
    [
        ("delete the number I gave you last week", "number"),
        ("forget the old address I told you, I moved", "old address"),
    ],
)
def test_a_thing_named_by_its_telling_is_forgotten(text: str, target: str) -> None:
    result = extract(text)
    assert (result.command, result.command_target) == (Command.FORGET, target)


@pytest.mark.parametrize(
    "text",
    [
        "I don't mind forgetting my keys now and then, it happens",
        "would you mind telling me how long to boil an egg",
        "I'd appreciate it if you could recommend a thriller",
    ],
)
def test_polite_ordinary_requests_give_no_command(text: str) -> None:
    assert extract(text).command is None


def test_an_errand_told_is_no_memory_to_forget() -> None:
    assert detect_command("forget the milk I told you to buy, we have some").command is None


def test_the_fact_beside_a_polite_command_is_still_kept() -> None:
    result = extract("Remove please the phone number I gave you, I live in Porto now.")
    assert result.command is Command.FORGET
    assert any("Porto" in fact.text for fact in result.facts)
