"""Shared regex fragments and object-phrase cleanup for the self-statement rules."""

from __future__ import annotations

import re

# Adverbs a speaker puts between subject and verb without changing the statement.
ADVERBS = (
    r"(?:(?:really|just|absolutely|totally|truly|genuinely|properly|seriously|utterly|literally|"
    r"also|still|so|definitely|"
    r"do|pretty much|secretly|low-?key|100%|very|super|pretty|quite|deeply|completely|"
    r"strictly|fully|both|all|always|mostly|basically|originally|even|kind of|sort of|"
    r"kinda|sorta|maybe|probably)\s+)*"
)
I_AM = r"(?:I'm|I am|Im)"
_TRAILING_NOISE = re.compile(
    r"(?:\s+(?:at all|in general|through and through|any day|anymore|any more|too|either|"
    r"so much|a lot|the most|for me|to me|lol|haha|lmao|ok|though|tbh|now|honestly|really|"
    r"whatsoever|as well|no matter what|all the way|for sure|of course|by trade|by the way|"
    r"at this point|hands down|in it))+$",
    re.I,
)
# The occasion a durable habit is for ("learning Greek for a trip to Crete") is episodic
# (labelling rule 3): the fact ends before it.
EPISODIC_PURPOSE = re.compile(
    r"\s+(?:for|before|ahead of)\s+(?:a|an|the|my|our|this|that|his|her|their)\s+"
    r"(?:\w+\s+)?(?:trip|holiday|vacation|move|honeymoon|wedding|visit|journey|tour|cruise)"
    r"\b.*$",
    re.I,
)
PRONOUN_OBJECT = re.compile(
    r"^(?:it|that|this|these|those|them|you|him|her|when|how|what|the way|that one|this one|"
    r"it all|all of it|one|another|any more|anything|(?:all\s+)?(?:that|this)\s+stuff|"
    r"stuff like that|all that)\b",
    re.I,
)


def clean_object(phrase: str) -> str:
    """Trim fillers and trailing intensifiers from an object phrase."""
    phrase = phrase.strip(" ,.;:!?\"'")
    previous = None
    while previous != phrase:
        previous = phrase
        phrase = _TRAILING_NOISE.sub("", phrase).strip(" ,.;:!?")
    return phrase


def is_generic_object(phrase: str, generic: frozenset[str]) -> bool:
    """True for objects that only point back at something else ("the texture", "it")."""
    words = phrase.lower().split()
    if not words or PRONOUN_OBJECT.match(phrase):
        return True
    return len(words) == 2 and words[0] in ("the", "that", "this") and words[1] in generic
