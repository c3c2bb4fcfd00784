"""The strict reply contracts and the checks after parsing: grounded, not degenerate."""

from __future__ import annotations

import json

import pytest

from memmesh.extraction.semantic.parsing import DegenerateOutput, MalformedOutput
from memmesh.observation import ObservationKind
from memmesh.observation.schema import parse_observer_reply, parse_reflector_reply
from memmesh.observation.validation import (
    UngroundedOutput,
    validate_observations,
    validate_reflection,
)

TURNS = {
    "t1": "I'm moving to Lisbon in May.",
    "t2": "Exciting! Have you found a place yet?",
    "t3": "Not yet. I prefer Alfama, and my budget is 1200 a month.",
}


def observer_reply(*observations: dict[str, object]) -> str:
    return json.dumps({"observations": list(observations)})


def note(text: str, kind: str = "fact", turn_ids: tuple[str, ...] = ("t1",)) -> dict[str, object]:
    return {"text": text, "kind": kind, "turn_ids": list(turn_ids)}


def test_a_good_observer_reply_is_accepted() -> None:
    reply = parse_observer_reply(
        observer_reply(
            note("User is moving to Lisbon in May.", "plan"),
            note("User prefers Alfama; budget 1200 a month.", "preference", ("t3",)),
        ),
        max_observations=5,
    )
    observations = validate_observations(reply, TURNS)
    assert [(o.kind, o.turn_ids) for o in observations] == [
        (ObservationKind.PLAN, ("t1",)),
        (ObservationKind.PREFERENCE, ("t3",)),
    ]


def test_a_reply_in_a_code_fence_is_forgiven() -> None:
    fenced = (
        "```json\n" + observer_reply(note("User is moving to Lisbon in May.", "plan")) + "\n```"
    )
    assert parse_observer_reply(fenced, max_observations=5).observations


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        '{"observations": [ {"text": ',
        json.dumps({"observations": [note("x", "mood")]}),
        json.dumps({"observations": [note("x")], "confidence": 1}),
        json.dumps({"observations": [{"text": "x", "kind": "fact", "turn_ids": [1]}]}),
        json.dumps({"observations": [note("x" * 201)]}),
        json.dumps({"observations": [note("x", turn_ids=())]}),
        json.dumps({"observations": "User moved."}),
        json.dumps([note("x")]),
    ],
    ids=[
        "not-json",
        "cut-off",
        "unknown-kind",
        "extra-field",
        "id-not-text",
        "too-long",
        "no-evidence",
        "not-a-list",
        "no-object",
    ],
)
def test_malformed_observer_replies_are_rejected(content: str) -> None:
    with pytest.raises(MalformedOutput):
        parse_observer_reply(content, max_observations=5)


def test_more_observations_than_the_cap_are_rejected() -> None:
    many = observer_reply(*(note(f"User said thing {i}.") for i in range(4)))
    with pytest.raises(MalformedOutput, match="at most 3"):
        parse_observer_reply(many, max_observations=3)


def test_a_cited_turn_that_is_not_in_the_input_is_ungrounded() -> None:
    reply = parse_observer_reply(
        observer_reply(note("User is moving to Lisbon.", "plan", ("t9",))), 5
    )
    with pytest.raises(UngroundedOutput, match="'t9'"):
        validate_observations(reply, TURNS)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("User is moving to Porto in May.", "porto"),
        ("User is moving to Lisbon in May with Sarah.", "sarah"),
        ("User's budget is 1500 a month.", "1500"),
    ],
)
def test_names_and_numbers_the_cited_turns_lack_are_ungrounded(text: str, named: str) -> None:
    reply = parse_observer_reply(observer_reply(note(text, "plan", ("t1", "t3"))), 5)
    with pytest.raises(UngroundedOutput, match=named):
        validate_observations(reply, TURNS)


def test_words_the_cited_turns_do_not_say_are_ungrounded() -> None:
    reply = parse_observer_reply(
        observer_reply(note("User adores surfing, sailing and rowing boats.", "preference")), 5
    )
    with pytest.raises(UngroundedOutput, match="not in the cited turns"):
        validate_observations(reply, TURNS)


@pytest.mark.parametrize(
    "content",
    [
        observer_reply(),
        observer_reply(note("User is moving to Lisbon."), note("user is moving to  Lisbon.")),
        observer_reply(note("User decided.", "decision")),
    ],
    ids=["empty", "repeated", "framing-only"],
)
def test_degenerate_observer_replies_are_rejected(content: str) -> None:
    with pytest.raises(DegenerateOutput):
        validate_observations(parse_observer_reply(content, 5), TURNS)


SOURCE_LINES = [
    "User decided to go with oak cabinets with brass handles.",
    "User's budget is 12k, maybe a bit more if the cabinets are nice.",
    "User is unsure whether to move the sink under the window.",
    "User needs to call Marco on Monday about the plumber.",
]
SOURCE = "Thread fields: kitchen renovation with Marco\n" + "\n".join(SOURCE_LINES)


def reflection(summary: str, *left_off: str) -> str:
    return json.dumps({"summary": summary, "left_off": list(left_off)})


def test_a_condensed_grounded_reflection_is_accepted() -> None:
    reply = parse_reflector_reply(
        reflection(
            "Kitchen renovation with Marco: oak cabinets chosen, budget 12k. Sink move still open.",
            "Next step: call Marco on Monday about the plumber",
        )
    )
    validate_reflection(reply, SOURCE, SOURCE_LINES)


@pytest.mark.parametrize(
    "content",
    [
        reflection("Kitchen."),
        json.dumps({"summary": "Kitchen.", "left_off": ["a", "b", "c", "d"]}),
        json.dumps({"summary": "", "left_off": ["a"]}),
        json.dumps({"summary": "x" * 601, "left_off": ["a"]}),
        json.dumps({"summary": "Kitchen.", "left_off": ["x" * 161]}),
    ],
    ids=["no-bullets", "four-bullets", "empty-summary", "long-summary", "long-bullet"],
)
def test_malformed_reflector_replies_are_rejected(content: str) -> None:
    with pytest.raises(MalformedOutput):
        parse_reflector_reply(content)


def test_a_reflection_not_shorter_than_its_input_is_degenerate() -> None:
    reply = parse_reflector_reply(
        reflection("A kitchen renovation with Marco, who gets a call.", "Call Marco")
    )
    with pytest.raises(DegenerateOutput, match="not shorter"):
        validate_reflection(reply, "Kitchen with Marco, call Marco.", ["Call Marco."])


def test_a_summary_that_strings_observations_together_is_degenerate() -> None:
    reply = parse_reflector_reply(reflection(" ".join(SOURCE_LINES[:3]), "Call Marco on Monday"))
    with pytest.raises(DegenerateOutput, match="verbatim"):
        validate_reflection(reply, SOURCE * 2, SOURCE_LINES)


def test_repeated_bullets_are_degenerate() -> None:
    reply = parse_reflector_reply(reflection("Kitchen with Marco.", "Call Marco", "call  Marco"))
    with pytest.raises(DegenerateOutput, match="repeats"):
        validate_reflection(reply, SOURCE, SOURCE_LINES)


def test_a_reflection_naming_what_the_input_lacks_is_ungrounded() -> None:
    reply = parse_reflector_reply(
        reflection("Kitchen with Marco and Giulia: oak chosen.", "Call Marco on Monday")
    )
    with pytest.raises(UngroundedOutput, match="giulia"):
        validate_reflection(reply, SOURCE, SOURCE_LINES)
