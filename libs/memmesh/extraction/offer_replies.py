"""A user's short answer to a pending work order the assistant just offered (seed 001
§2.21B): "cancel that" or "forget that". It is no extraction rule: the gateway asks only
right after a session was offered a work order, and only a whole turn of a few words about
"that" counts, so "cancel that appointment with my dentist" stays an ordinary request and
no extraction output (nor the clause head) changes.
"""

from __future__ import annotations

import enum
import re

from memmesh.extraction.commands import CommandMatch, detect_command
from memmesh.extraction.model import Command
from memmesh.extraction.text import normalize


class OfferReply(enum.StrEnum):
    CANCEL = "CANCEL"
    DO_NOT_MENTION = "DO_NOT_MENTION"


_LEAD = r"(?:(?:ok(?:ay)?|no|nah|actually|never\s*mind|please|just|yes|yeah)[,.!]?\s+)*"
_CANCEL = re.compile(
    rf"{_LEAD}(?:please\s+)?(?:cancel|scrap|drop|call\s+off|abandon)\s+(?:that|it|this)"
    r"(?:\s+one)?(?:[,.]?\s+please)?[.!]*",
    re.IGNORECASE,
)
_FORGETTING = frozenset({Command.FORGET, Command.DO_NOT_MENTION})


def offer_reply(text: str, heard: CommandMatch | None = None) -> OfferReply | None:
    """CANCEL for "cancel that", DO_NOT_MENTION for "forget that" or "don't mention that
    again" (a forget with no topic of its own), None for anything else. `heard` is
    detect_command's reading of the normalised text when the caller has it."""
    said = normalize(text).strip()
    if _CANCEL.fullmatch(said):
        return OfferReply.CANCEL
    match = heard if heard is not None else detect_command(said)
    if match.command in _FORGETTING and not match.target:
        return OfferReply.DO_NOT_MENTION
    return None
