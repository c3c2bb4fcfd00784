"""The strict reply contracts of the Observer and the Reflector (pydantic v2): a reply that
does not parse into them is invalid output, whatever it says."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memmesh.extraction.semantic.parsing import MalformedOutput
from memmesh.observation.model import (
    MAX_LEFT_OFF,
    MAX_LEFT_OFF_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_SUMMARY_CHARS,
    ObservationKind,
)

# Evidence one observation may cite.
MAX_CITED_TURNS = 8
# Models often wrap JSON in a code fence despite the prompt; the fence alone is forgiven.
_FENCE = re.compile(r"^\s*```(?:json)?\s*(?P<body>.*?)\s*```\s*$", re.DOTALL)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ObservationReply(_Strict):
    text: str = Field(min_length=1, max_length=MAX_OBSERVATION_CHARS)
    kind: ObservationKind
    turn_ids: list[str] = Field(min_length=1, max_length=MAX_CITED_TURNS)


class ObserverReply(_Strict):
    observations: list[ObservationReply]


class ReflectorReply(_Strict):
    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)
    left_off: list[str] = Field(min_length=1, max_length=MAX_LEFT_OFF)


def _problems(error: ValidationError) -> str:
    """Each problem as `field.path: message`, the first five."""
    return "; ".join(
        f"{'.'.join(str(part) for part in issue['loc']) or 'reply'}: {issue['msg']}"
        for issue in error.errors()[:5]
    )


def _body(content: str) -> str:
    fenced = _FENCE.match(content)
    return fenced.group("body") if fenced else content


def parse_observer_reply(content: str, max_observations: int) -> ObserverReply:
    """The Observer's reply; raise MalformedOutput naming what is wrong."""
    try:
        reply = ObserverReply.model_validate_json(_body(content))
    except ValidationError as bad:
        raise MalformedOutput(_problems(bad)) from bad
    if len(reply.observations) > max_observations:
        raise MalformedOutput(
            f"observations: {len(reply.observations)} given, at most {max_observations} allowed"
        )
    return reply


def parse_reflector_reply(content: str) -> ReflectorReply:
    """The Reflector's reply; raise MalformedOutput naming what is wrong."""
    try:
        reply = ReflectorReply.model_validate_json(_body(content))
    except ValidationError as bad:
        raise MalformedOutput(_problems(bad)) from bad
    too_long = [i for i, bullet in enumerate(reply.left_off) if len(bullet) > MAX_LEFT_OFF_CHARS]
    if too_long:
        raise MalformedOutput(
            f"left_off.{too_long[0]}: longer than {MAX_LEFT_OFF_CHARS} characters"
        )
    return reply
