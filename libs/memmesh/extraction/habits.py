"""Habits stated as patterns (USER_PATTERN) and user-assistant shared history (SHARED_NARRATIVE)."""

from __future__ import annotations

import re

from .context import SELF_STATEMENT_MARKERS, ClauseContext, build
from .markers import HYPOTHETICAL, SARCASM
from .model import Candidate, FactType
from .phrases import clean_object
from .text import conjugate_3sg, slug, third_person

# seed 002: USER_PATTERN confidence by how firmly the habit is stated; 7500-7999 is a proposal.
_FREQUENCY_BP = {
    "always": 8500,
    "never": 8500,
    "every": 8500,
    "usually": 8000,
    "normally": 8000,
    "typically": 8000,
    "generally": 8000,
    "mostly": 7800,
    "tend to": 7800,
    "often": 7700,
    "rarely": 7700,
}
_HABIT = re.compile(
    r"^I\s+(?P<freq>always|never|usually|normally|typically|generally|mostly|tend to|often|rarely)"
    r"\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$",
    re.I,
)
_NOT_HABIT_VERBS = frozenset(
    """want wanted wish thought think knew know said say mean meant feel
felt seem am was were be been have had do did get got went can could will would should must
forget forgot need needed""".split()
)
# Choices and routines; other verbs after "always" are usually complaints ("always burn the rice").
_ROUTINE_VERBS = frozenset(
    """grab pick choose order take eat drink listen watch read wear sit book
buy go cook skip prefer use sleep wake work run walk bike cycle swim train shop travel fly start
end spend pay carry bring keep stay avoid ask write check""".split()
)
_NEEDS_OBJECT = frozenset(
    "grab pick choose order take buy go prefer use start end spend pay carry bring keep avoid ask "
    "check book wear".split()
)
_NARRATIVE = re.compile(
    r"^we(?:'ve| have)\s+been\s+(?:talking|chatting|working together|doing this)\s+"
    r"(?P<span>(?:for|since)\s+.+)$|^you(?:'ve| have)\s+been\s+helping\s+me\s+(?P<span2>"
    r"(?:with\s+[\w\s]+\s+)?(?:for|since)\s+.+)$",
    re.I,
)


_ROUTINE = re.compile(
    r"^I\s+(?P<verb>listen to|watch|read|play|drink|eat|run|swim|walk|cook|bake|meditate|"
    r"journal|do yoga|go to|hike|cycle|bike)\b(?P<rest>.*?)\s+(?P<freq>every (?:day|morning|night|"
    r"evening|week|weekend)|daily|religiously|all the time|constantly|nightly|on weekends|"
    r"(?:once|twice|three times|\w+ times) a (?:day|week|month))$",
    re.I,
)


def habit_candidates(ctx: ClauseContext) -> list[Candidate]:
    """A habit the user states as a pattern ("I always grab the window seat")."""
    routine = _ROUTINE.match(ctx.text)
    if routine:
        verb = routine.group("verb").lower()
        first, _, tail = verb.partition(" ")
        verb3 = f"{conjugate_3sg(first)} {tail}".strip()
        rest = clean_object(routine.group("rest"))
        rendered = f"User {verb3} {third_person(rest)} {routine.group('freq').lower()}"
        return [
            build(
                ctx,
                rendered,
                "preference",
                f"preference.habit.{slug(verb + ' ' + rest)}",
                8500,
                SELF_STATEMENT_MARKERS,
                FactType.USER_PATTERN,
            )
        ]
    match = _HABIT.match(ctx.text)
    if not match:
        return []
    verb = match.group("verb").lower()
    if verb in _NOT_HABIT_VERBS or verb not in _ROUTINE_VERBS:
        return []
    freq = match.group("freq").lower()
    rest = clean_object(match.group("rest"))
    # "I never go, even when…": a verb that needs what it is about says nothing without it
    # ("I never drink" does).
    if verb in _NEEDS_OBJECT and not rest.strip(" ,.!"):
        return []
    category = "constraint" if verb in ("use", "need", "take") else "preference"
    if freq == "tend to":
        rendered = f"User tends to {verb} {third_person(rest)}"
    else:
        rendered = f"User {freq} {conjugate_3sg(verb)} {third_person(rest)}"
    topic = re.split(r"\b(?:when|whenever|if|because|before|after|while)\b", rest)[0]
    return [
        build(
            ctx,
            rendered,
            category,
            f"{category}.habit.{slug(verb + ' ' + topic)}",
            _FREQUENCY_BP[freq],
            SELF_STATEMENT_MARKERS,
            FactType.USER_PATTERN,
        )
    ]


def narrative_candidates(ctx: ClauseContext) -> list[Candidate]:
    """Shared user-assistant history stated with a duration ("we've been talking for years")."""
    match = _NARRATIVE.match(ctx.text)
    if not match:
        return []
    span = clean_object(match.group("span") or match.group("span2"))
    if match.group("span"):
        text = f"User and the assistant have been talking {third_person(span)}"
    else:
        text = "User has been helped by the assistant " + third_person(span)
    confidence = 9000 if re.search(r"\d|years?|since", span, re.I) else 7000
    return [
        build(
            ctx,
            text,
            "relationship",
            "narrative.shared_history",
            confidence,
            frozenset({SARCASM, HYPOTHETICAL}),
            FactType.SHARED_NARRATIVE,
        )
    ]
