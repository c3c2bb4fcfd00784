"""Allergies, intolerances and conditions told through what they do to the user.

People rarely say "I am allergic to sesame" on a call; they say "sesame sends me to the ER"
or "when I eat gluten I get sick for days". A generic trigger (no "the", "that", no time)
with a bodily reaction is a standing constraint, not a one-off: "that curry made me sick
last night" names one dish on one night and stays out. The key's area is `health`, so the
fact is a standing constraint and is used, not said, on a voice channel (seed 001 §2.11.11).
"""

from __future__ import annotations

import re

from .context import SELF_STATEMENT_MARKERS, ClauseContext, build
from .lexicon import NOT_A_NAME
from .markers import HYPOTHETICAL, QUESTION
from .model import Candidate
from .text import slug, third_person

_LEAD_IN = (
    r"^(?:(?:quick thing|so|and|but|also|oh|well|yeah|ya|um|uh|like|honestly|basically)[\s,]+)*"
)
_EFFECT_VERB = (
    r"(?:puts?|sent|sends?|gives?|gave|makes?|made|wrecks?|wrecked|lands?|landed|"
    r"(?:nearly|almost) killed|triggers?|sets? off|set off|mess(?:es)? up|messed up|"
    r"knocks? out|destroys?|kills?|does a number on)"
)
_REACTION = re.compile(
    r"\b(?:hospital|er|a&e|emergency|hives|rash|sick|ill|throat|swell\w*|itch\w*|migraines?|"
    r"stomach|gut|anaphyla\w*|epipen|break out|bloat\w*|seizures?|reaction|puke|vomit\w*|"
    r"wheez\w*|sneez\w*|asthma|cramps?|headaches?|nause\w*|breathe|face|skin|killed|dizzy|faint)\b",
    re.I,
)
_TRIGGER_DOES = re.compile(
    rf"{_LEAD_IN}(?P<trigger>[a-z][a-z\s&-]{{1,40}}?)\s+(?:(?:can|will|always|just|really)\s+)?"
    rf"(?P<verb>{_EFFECT_VERB})\s+"
    r"(?P<object>me|my)\b(?P<effect>.*)$",
    re.I,
)
_WHEN_I_EAT = re.compile(
    rf"{_LEAD_IN}(?:when(?:ever)?|if|every time)\s+I\s+(?:eat|drink|have|touch|take)\s+"
    r"(?:any\s+)?(?P<trigger>[a-z][a-z\s-]{1,30}?),?\s+I\s+(?:get|become|go|end up|break out|"
    r"feel|am|swell|can't breathe|throw up)\b(?P<effect>.*)$",
    re.I,
)
# "I break out in a rash from nickel", "I get migraines from red wine": the reaction first.
_REACTION_FROM = re.compile(
    rf"{_LEAD_IN}I\s+(?:always\s+|still\s+)?(?:get|break out in|come out in|end up with|have)\s+"
    r"(?P<effect>(?:[\w-]+\s+){0,3}?)(?:from|after|off)\s+(?:eating\s+|drinking\s+|any\s+)?"
    r"(?P<trigger>[a-z][a-z\s-]{1,30}?)$",
    re.I,
)
# Triggers that are people, pronouns or situations: "my boss makes me sick" is venting.
_NOT_A_TRIGGER = frozenset(
    """it that this these those he she they you people work life everything everyone
    everybody stress traffic news school job boss mom dad mum family kids he's she's""".split()
)
_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|last|this morning|the other day|earlier|just now)\b", re.I
)


def consequence_candidates(ctx: ClauseContext, text: str) -> list[Candidate]:
    """A constraint told by its consequence, or nothing."""
    when = _WHEN_I_EAT.match(text)
    match = _TRIGGER_DOES.match(text) or when
    if match:
        reaction = text[match.end("trigger") :]
    else:
        match = _REACTION_FROM.match(text)
        reaction = match.group("effect") if match else ""
    if not match or _TIME.search(text) or not _REACTION.search(reaction):
        return []
    trigger = match.group("trigger").strip()
    words = trigger.lower().split()
    if (
        words[0] in ("the", "a", "an", "my", "our", "your", "his", "her", "their")
        or set(words) & _NOT_A_TRIGGER
        or all(w in NOT_A_NAME for w in words)
    ):
        return []
    said = re.sub(_LEAD_IN, "", text, flags=re.I).strip(" ,.")
    said = re.sub(r"\s+(?:once|one time|before|again)$", "", said, flags=re.I)
    return [
        build(
            ctx,
            f"User's limit: {third_person(said)}",
            "constraint",
            f"constraint.health.{slug(trigger)}",
            9000,
            # "When I eat gluten I get sick" reads like a question and "if I…" like a
            # supposition; both tell what always happens.
            SELF_STATEMENT_MARKERS - {QUESTION, HYPOTHETICAL} if when else SELF_STATEMENT_MARKERS,
        )
    ]
