"""Which facts an extraction adopted state Current State profile fields: the reading of an
extraction's result, kept beside the rules that make those facts (the "identity.name" and
language keys are this library's own). Stable facts a user states about themselves ("I'm
Ana", "my native language is Spanish") fill EMPTY profile fields, so push memory and the
do-not-repeat flags carry them on every turn (seed 001 §2.11.3, §2.11.12).

Whether a field is empty is not decided here: Current State's fill_empty_profile change
sets a field only while it is empty, so it stays the authority and a value it holds is
never overwritten from conversation (§2.11.10); the composer tags a disagreement CONFLICT."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memmesh.lexicon.languages import language_code_in

PROFILE_REASON = "USER_STATED_PROFILE"
# Only facts held with the confidence a USER_FACT needs to be trusted (seed 002).
MIN_CONFIDENCE_BP = 8000
PROFILE_FIELDS = ("display_name", "primary_language")
_LANGUAGE_KEYS = ("identity.language.native", "constraint.language.response")
_ADOPTED_KINDS = ("CREATED", "CONFIRMED", "CORRECTED")


@dataclass(frozen=True)
class AppliedChange:
    """An atom change an extraction applied, in the terms the rule needs (enum names
    without their prefixes: kind "CREATED", status "ACTIVE", exposure "SAFE_TO_SPEAK")."""

    kind: str
    status: str
    exposure: str
    key: str
    text: str
    critical_tokens: tuple[str, ...]
    confidence_bp: int


def stated_profile(changes: Iterable[AppliedChange]) -> dict[str, str]:
    """Profile fields ("display_name", "primary_language") the turn's applied changes state."""
    fields: dict[str, str] = {}
    for change in changes:
        trusted = (
            change.kind in _ADOPTED_KINDS
            and change.status == "ACTIVE"
            and change.confidence_bp >= MIN_CONFIDENCE_BP
            and change.exposure == "SAFE_TO_SPEAK"
        )
        if not trusted:
            continue
        if change.key == "identity.name" and len(change.critical_tokens) == 1:
            fields["display_name"] = change.critical_tokens[0]
        elif change.key in _LANGUAGE_KEYS and (code := language_code_in(change.text)):
            fields.setdefault("primary_language", code)
    return fields
