"""Clauses that say nothing to keep however durable they sound: a clause broken off before
its content, one whose object is only "that … thing", and one that denies a condition.

The head reads a clause's words, not what is missing from them, so these shapes are checked
before a clause it accepts becomes a fact.
"""

from __future__ import annotations

import re

from ..lexicon import MEDICAL_CONDITION_ALTERNATION, durable_adjective_alternation
from .render import fact_body

# Words a clause cannot end on when it is finished: a copula or auxiliary still waiting for
# its complement ("jazz is… fine I guess"), a determiner waiting for its noun, a conjunction
# waiting for what it joins. Not "her" or "his", which end a clause as pronouns ("she/her").
_WAITING = frozenset(
    "is are was were am be been being 's the a an my our your their and or but with".split()
)


def is_broken_off(clause: str) -> bool:
    """ "jazz is…", "my favourite band is the": the clause stops before it says anything."""
    words = re.findall(r"[\w']+|'s", fact_body(clause).lower())
    if not words:
        return True
    last = words[-1]
    return last in _WAITING or (last.endswith("'s") and last[:-2] in ("it", "that", "what"))


# "I love that numbing peppercorn thing", "this whole minimalist stuff": what is liked is
# pointed at, not named; the clause before it, if anything, named it.
# Not "…stray kids, that kind of stuff", which rounds off a list it named.
_VAGUE_OBJECT = re.compile(
    r"\b(?:that|this|those|these|the whole|all that|all this)\s+"
    r"(?!(?:kind|sort|type)\s+of\b)(?:[\w'-]+\s+){0,3}?(?:thing|things|stuff)\W*$",
    re.I,
)


def names_only_a_vague_thing(clause: str) -> bool:
    """Whether the clause's object is "that … thing" or "this … stuff"."""
    return bool(_VAGUE_OBJECT.search(fact_body(clause)))


_CONDITION = (
    "allergic|intolerant|sensitive|"
    + durable_adjective_alternation("constraint")
    + "|"
    + MEDICAL_CONDITION_ALTERNATION
)
# "not allergic or anything", "I'm not diabetic", "I'm not a wheelchair user", "I don't have
# celiac": a condition or an aid the user says they do not have is no limit on anything (a
# denial is never a constraint). "not allowed dairy" and "not able to" name no condition.
_DENIED_CONDITION = re.compile(
    r"^(?:(?:I'm|I am|Im|I was|I've never been|I have never been)\s+)?"
    r"(?:(?:really|actually|even|technically)\s+)?(?:not|never)\s+(?:\w+ly\s+)?(?:an?\s+)?"
    rf"(?:{_CONDITION}|[\w-]+\s+user)\b"
    r"|^I\s+(?:don't|do not|dont|never had|have never had)\s+(?:have\s+)?(?:an?\s+|any\s+)?"
    rf"(?:[\w-]+\s+)?(?:{_CONDITION}|allerg\w*|intolerance)\b",
    re.I,
)


# "Maybe ADHD? Never diagnosed.": what no one diagnosed is no known condition.
_NOT_DIAGNOSED = re.compile(
    r"^(?:but\s+)?(?:(?:I've|I have|I was|I'm)\s+)?(?:never|not)\s+(?:been\s+)?"
    r"(?:officially\s+|formally\s+|properly\s+)?diagnosed\b",
    re.I,
)


# "I couldn't agree more", "I am as well", "me too": agreeing with what the other said.
_AGREEING = re.compile(
    r"^(?:I\s+)?(?:(?:totally|completely|fully|really)\s+)?(?:agree|couldn't agree more|"
    r"could not agree more|can't agree more)\b|^I\s+(?:am|do|have|did|was)\s+(?:as well|too)$|"
    r"^(?:me|same)\s+(?:too|here)$",
    re.I,
)


def only_agrees(clause: str) -> bool:
    """Whether the clause only agrees with what the other speaker said."""
    return bool(_AGREEING.match(fact_body(clause)))


def denies_a_condition(clause: str) -> bool:
    """Whether the clause says the user does not have a condition or a diet, or was never
    diagnosed with one."""
    body = fact_body(clause)
    return bool(_DENIED_CONDITION.search(body) or _NOT_DIAGNOSED.search(body))
