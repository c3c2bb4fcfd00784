"""One standing constraint told with its cause or its consequence is one fact.

People give a condition and what it means for them in one breath: "I have sickle cell, so
cold weather and dehydration are real risks", "I can't eat gluten because I'm coeliac",
"on blood thinners permanently. No ibuprofen suggestions." Read clause by clause that is
two or three facts, and the second ones are half-facts ("User's diet is pretty restricted")
that mean nothing once stored apart from their cause. Labelling rule 6 (one fact per
distinct item) asks for one fact; so does a memory that must keep the reason with the limit.

A fold needs a condition (an allergy, intolerance, illness, medication, fear, diet, sobriety
or access need) and, right next to it in the turn, a limit: something avoided, impossible,
needed or at risk. They must be joined as cause and effect ("so", "which means", "because",
"since") or simply side by side (a comma, a new sentence); "and" or "but" join two things.
A limit that is itself a condition of its own ("I'm vegan, I can't have gluten either") is
a second item and stays apart unless the words join them as cause and effect. A clause that
only repeats the condition ("allergic to latex, like seriously allergic") is dropped.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memmesh.text import stem

from .model import ExtractedFact
from .text import LEARNED_DEFAULT_LEAD, LEARNED_LEADS

# Key areas of standing conditions: what a limit beside them is usually the consequence of.
_CONDITION_AREAS = frozenset(
    {
        "allergy",
        "intolerance",
        "medical",
        "health",
        "fear",
        "diet",
        "sobriety",
        "smoking",
        "accessibility",
        "religious_observance",
    }
)
_LIMIT = re.compile(
    r"\b(?:can't|cannot|can not|couldn't|never|avoids?|avoiding|no|not|don't|doesn't|won't|"
    r"must|has to|have to|needs?|stays? away|keeps? away|careful|risks?|restricted|limits?|"
    r"without|nothing|non|passes out|gets? sick|makes? \w+ sick|heads up|wants the assistant)\b",
    re.I,
)
# Conditions a learned fact names in its own words (the head gives no key area).
_CONDITION_WORD = re.compile(
    r"\b(?:allerg\w*|intoleran\w*|diabet\w*|c[o]?eliac|crohn'?s|immunosuppress\w*|"
    r"blood thinners?|insulin|dialysis|transplant|pacemaker|epilep\w*|asthma\w*|sober|"
    r"sickle cell|lupus|hemophilia|haemophilia|kidney disease|heart condition)\b",
    re.I,
)
_NEGATED = re.compile(r"\b(?:not|no longer|never been|isn't|am not|aren't)\b", re.I)
# Areas whose fact explains a limit beside it even with no word between them: "I cannot
# eat the gluten, I have celiac disease". A diet beside a limit may be two items ("I'm vegan,
# I can't have gluten either"), so a diet folds only when the words join cause and effect.
_CAUSE_AREAS = frozenset(
    {"allergy", "intolerance", "medical", "health", "fear", "sobriety", "accessibility", "learned"}
)
# Diets and observances, and the bare exclusions that only spell them out: "recipe for 4, no
# pork. I'm halal", "Restaurants near the office, halal only. I eat halal".
_DIET_AREAS = frozenset({"diet", "religious_observance"})
_DIET_WORD = re.compile(
    r"\b(?:halal|kosher|vegan|vegetarian|pescatarian|jain|keto|paleo|"
    r"plant[- ]based|\w+ diet)\b",
    re.I,
)
_BARE_EXCLUSION = re.compile(r"^(?:no|non|nothing with|without)\b|\bonly$", re.I)
# What the limit is joined to its cause with: the clause may run on past it ("so cold
# weather and dehydration are real risks").
_CAUSE_THEN_EFFECT = re.compile(
    r"^(?:and\s+)?(?:so|which means|which is why|that's why|that is why|therefore|hence|"
    r"meaning)\b",
    re.I,
)
_EFFECT_THEN_CAUSE = re.compile(r"^(?:because|since|as|cause|'cause|cos)\b", re.I)
_GAP_PUNCTUATION = re.compile(r"[\s,;:.!\u2014-]+")
# The frames a learned fact starts with ("User's limit: ..."), read past to its own words.
_LEARNED_LEAD = re.compile(
    "^(?:"
    + "|".join(re.escape(lead) for lead in (*LEARNED_LEADS.values(), LEARNED_DEFAULT_LEAD))
    + r")\s*"
)
_WORD = re.compile(r"[a-z0-9']+")
_FILLER = frozenset(
    "user user's they them their like really seriously very so just quite pretty super "
    "totally absolutely properly badly bad is am are be been i i'm my me a an the only".split()
)


def fold_consequences(facts: list[ExtractedFact], text: str) -> list[ExtractedFact]:
    """The facts of one turn with each condition's adjacent limits folded into it."""
    starts = [text.find(fact.evidence_span) for fact in facts]
    if len(facts) < 2 or min(starts) < 0:
        return facts
    # Indexes of the facts in the order they were said; a fold keeps the earlier one's place.
    said_order = sorted(range(len(facts)), key=lambda i: starts[i])
    result: dict[int, ExtractedFact] = {said_order[0]: facts[said_order[0]]}
    last = said_order[0]
    for index in said_order[1:]:
        previous, fact = result[last], facts[index]
        gap = text[starts[last] + len(previous.evidence_span) : starts[index]]
        joined = _joined(previous, fact, gap)
        if joined is None:
            result[index], last = fact, index
            continue
        evidence = text[starts[last] : starts[index] + len(fact.evidence_span)]
        result[last] = replace(joined, evidence_span=evidence)
    return [result[i] for i in range(len(facts)) if i in result]


def _joined(first: ExtractedFact, second: ExtractedFact, gap: str) -> ExtractedFact | None:
    """The one fact two adjacent facts make, or None when they are two items."""
    link = _GAP_PUNCTUATION.sub(" ", gap).strip()
    if _is_condition(first) and _restates(second, first) and not link:
        return first
    if _is_condition(first) and _is_limit(second):
        if _CAUSE_THEN_EFFECT.match(link) or (not link and _explains(first, second)):
            return _with_limit(first, second)
    if _is_condition(second) and _is_limit(first):
        if _EFFECT_THEN_CAUSE.match(link) or (not link and _explains(second, first)):
            return _with_limit(second, first)
    return None


def _area(fact: ExtractedFact) -> str:
    parts = fact.key.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "constraint" else ""


def _is_condition(fact: ExtractedFact) -> bool:
    area = _area(fact)
    if area == "learned":
        said = _said(fact)
        named = _CONDITION_WORD.search(said) or _is_diet(fact)
        return bool(named) and not _NEGATED.search(said)
    # "User cannot eat the gluten" is a diet's limit, not a diet.
    return area in _CONDITION_AREAS and not (area == "diet" and _is_limit(fact))


def _is_limit(fact: ExtractedFact) -> bool:
    if fact.category not in ("constraint", "preference"):
        return False
    # The clause as said: a learned fact may have lost its "no" ("No ibuprofen suggestions").
    return any(_LIMIT.search(words) for words in (_said(fact), fact.evidence_span)) or (
        _is_bare_exclusion(fact)
    )


def _is_diet(fact: ExtractedFact) -> bool:
    """A diet or observance, named by its key or, for a learned fact, in its own words."""
    if _area(fact) in _DIET_AREAS:
        return True
    return (
        _area(fact) == "learned"
        and bool(_DIET_WORD.search(_said(fact)))
        and not _is_bare_exclusion(fact)
    )


def _explains(condition: ExtractedFact, limit: ExtractedFact) -> bool:
    """A condition side by side with a limit that is no condition of its own: any limit for
    a cause, only a bare exclusion for a diet ("Kosher home. No shellfish.")."""
    if _is_condition(limit):
        return False
    if _is_diet(condition):
        # "Vegetarian. No mushrooms either, hate them.": a taste beside a diet is its own.
        return limit.category == "constraint" and _is_bare_exclusion(limit)
    return _area(condition) in _CAUSE_AREAS


def _is_bare_exclusion(fact: ExtractedFact) -> bool:
    return any(
        _BARE_EXCLUSION.search(words.strip(" .,")) for words in (_said(fact), fact.evidence_span)
    )


def _said(fact: ExtractedFact) -> str:
    """The fact's own words: a learned fact read past its frame ("User's limit: ...")."""
    return _LEARNED_LEAD.sub("", fact.text)


def _content(fact: ExtractedFact) -> set[str]:
    words = _WORD.findall(_said(fact).lower())
    return {stem(w) for w in words if w not in _FILLER}


def _restates(second: ExtractedFact, first: ExtractedFact) -> bool:
    """The second fact says nothing the first does not ("..., like seriously allergic")."""
    said = _content(second)
    return bool(said) and said <= _content(first)


def _with_limit(condition: ExtractedFact, limit: ExtractedFact) -> ExtractedFact:
    """The condition's fact with the limit told after it, in the limit's own words (a limit
    whose words the condition already says adds nothing: "No garlic, I'm allergic")."""
    if _content(limit) <= _content(condition):
        return replace(condition, confidence_bp=max(condition.confidence_bp, limit.confidence_bp))
    body = condition.text.rstrip(" .")
    said = limit.text.rstrip(" .")
    if _LEARNED_LEAD.match(said):
        tail = f"; {_LEARNED_LEAD.sub('', said)}"
    elif said.startswith("User's "):
        tail = "; their " + said.removeprefix("User's ")
    elif said.startswith("User "):
        tail = f", and {said.removeprefix('User ')}"
    else:
        tail = f"; {said}"
    tokens = tuple(dict.fromkeys((*condition.critical_tokens, *limit.critical_tokens)))
    return replace(
        condition,
        text=f"{body}{tail}.",
        critical_tokens=tokens,
        confidence_bp=max(condition.confidence_bp, limit.confidence_bp),
    )
