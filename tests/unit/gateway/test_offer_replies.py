"""What counts as "cancel that" or "forget that" right after a work order was offered: a
whole short turn about "that"; a request naming its own object is an ordinary turn."""

from __future__ import annotations

import pytest

from memmesh.extraction.commands import detect_command
from memmesh.extraction.offer_replies import OfferReply, offer_reply
from memmesh.extraction.text import normalize


@pytest.mark.parametrize(
    "said",
    ["cancel that", "Cancel that.", "Please cancel it.", "No, cancel that one please.",
     "Never mind, cancel that.", "Scrap that!", "call off that"],
)  # fmt: skip
def test_a_short_cancel_about_that_is_a_cancel(said: str) -> None:
    assert offer_reply(said) is OfferReply.CANCEL


@pytest.mark.parametrize("said", ["Forget that.", "forget it", "Don't mention that again."])
def test_a_forget_with_no_topic_of_its_own_is_do_not_mention(said: str) -> None:
    assert offer_reply(said) is OfferReply.DO_NOT_MENTION


@pytest.mark.parametrize(
    "said",
    [
        "Cancel that appointment with my dentist.",
        "I need to cancel that appointment with my dentist.",
        "Forget what I said about my sister.",
        "cancel",
        "Yes, book it.",
        "hello",
    ],
)
def test_look_alikes_are_ordinary_turns(said: str) -> None:
    assert offer_reply(said) is None


@pytest.mark.parametrize(
    "said",
    ["Forget that.", "forget it", "cancel that", "Forget what I said about my sister.", "hello"],
)
def test_a_reading_the_caller_already_has_gives_the_same_reply(said: str) -> None:
    # The gateway reads a turn's command once and hands the reading over.
    heard = detect_command(normalize(said))
    assert offer_reply(said, heard) is offer_reply(said)
