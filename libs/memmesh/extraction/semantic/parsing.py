"""Strict parsing of the model's reply into candidates for the seed 002 gates."""

from __future__ import annotations

import json

from memmesh.extraction.context import critical_tokens
from memmesh.extraction.model import BASIS_POINTS_MAX, Candidate, FactType

MAX_PROPOSALS = 5
_FACT_FIELDS = {"text", "category", "type", "confidence", "key", "critical_tokens"}


class MalformedOutput(ValueError):
    """The reply is not the JSON object the prompt asks for."""


class DegenerateOutput(ValueError):
    """The reply parses but says nothing usable (empty, repeated or oversized)."""


def _fact(raw: object, position: int) -> Candidate:
    if not isinstance(raw, dict) or not set(raw) <= _FACT_FIELDS:
        raise MalformedOutput(f"facts[{position}] is not an object with the contract's fields")
    text, category, kind, key = (
        raw.get("text"),
        raw.get("category"),
        raw.get("type", "USER_FACT"),
        raw.get("key"),
    )
    confidence = raw.get("confidence")
    if not all(isinstance(v, str) for v in (text, category, kind, key)):
        raise MalformedOutput(f"facts[{position}] text, category, type and key must be strings")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence <= 1
    ):
        raise MalformedOutput(f"facts[{position}].confidence must be a number in 0..1")
    if kind not in FactType.__members__:
        raise MalformedOutput(f"facts[{position}].type {kind!r} is unknown")
    tokens = raw.get("critical_tokens")
    if tokens is not None and (
        not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens)
    ):
        raise MalformedOutput(f"facts[{position}].critical_tokens must be a list of strings")
    text = str(text).strip()
    return Candidate(
        text=text,
        category=str(category),
        type=FactType[str(kind)],
        confidence_bp=round(float(confidence) * BASIS_POINTS_MAX),
        key=str(key).strip(),
        critical_tokens=tuple(dict.fromkeys(t.strip() for t in tokens if t.strip()))
        if tokens
        else critical_tokens(text),
        evidence_span="",
    )


def parse_reply(content: str) -> list[Candidate]:
    """Candidates of a reply; raise MalformedOutput or DegenerateOutput."""
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, TypeError) as bad:
        raise MalformedOutput("reply is not JSON") from bad
    if not isinstance(data, dict) or not isinstance(data.get("relevant"), bool):
        raise MalformedOutput("reply lacks a boolean 'relevant'")
    if set(data) - {"relevant", "facts"}:
        raise MalformedOutput("reply has fields outside the contract")
    facts = data.get("facts", [])
    if not isinstance(facts, list):
        raise MalformedOutput("'facts' is not a list")
    if not data["relevant"]:
        if facts:
            raise DegenerateOutput("'relevant' is false but facts were given")
        return []
    if not facts:
        raise DegenerateOutput("'relevant' is true but no facts were given")
    if len(facts) > MAX_PROPOSALS:
        raise DegenerateOutput(f"more than {MAX_PROPOSALS} facts")
    candidates = [_fact(raw, position) for position, raw in enumerate(facts)]
    texts = [c.text.lower() for c in candidates]
    if len(set(texts)) != len(texts) or any(not t for t in texts):
        raise DegenerateOutput("empty or repeated facts")
    return candidates
