"""What a correction goes on to say of the word it meant.

"it's Grete, not Greta, she's my mother-in-law", "Mochi. Not Mocha. The cat.", "Not peanuts,
walnuts. That's the allergy.": after the correction the user says what the meant word is, by a
pronoun, a demonstrative or a bare noun phrase. Read alone, that clause names nobody; with the
meant word put back it is the fact the correction was about.
"""

from __future__ import annotations

import re

from .lexicon import PERSON_ROLES
from .text import split_clauses

# "she's my mother-in-law", "he's been my GP for ten years", "is my language", "That's the
# allergy", "The cat", "my wife", "Business partner".
_SAYS_WHAT_IT_IS = re.compile(
    r"(?:(?:and|so|oh)\s+)*"
    r"(?:(?:he|she|it|that|this|they)(?:'s|\s+is|\s+was|'s been|\s+has been|'re|\s+are)\s+"
    r"|is\s+)?"
    r"(?:(?P<det>my|our|the)\s+)?(?P<what>[\w-]+(?:\s+[\w-]+)?)"
    r"(?P<since>\s+(?:for|since)\s+[^,.;!]+)?"
    # The clause may run on: "she's my mother-in-law and believe me she will notice".
    r"(?=\s*$|\s*[,.;!]|\s+(?:and|but|so|because)\b)",
    re.I,
)
# The restated word before a new statement: "i meant sertraline i take sertraline every day".
_RESTATED_THEN = r"\bI\s+(?:said|meant)\s+{meant}\s*[,;-]?\s+(?=(?:I|I'm|I've|my|we)\b)"
_ALLERGY = frozenset({"allergy", "allergies", "allergen"})


def restate_meant(fact_text: str, meant: str) -> str:
    """The fact text with the clause that says what the meant word is rewritten to state it
    of the word ("my mother-in-law is Grete"), and a restatement of the word cut off the
    statement it runs into."""
    # "March 9th": a number or a date is no one and nothing of the user's.
    if not re.fullmatch(r"[^\W\d_][\w' .-]*", meant.strip()):
        return fact_text
    fact_text = re.sub(
        _RESTATED_THEN.format(meant=re.escape(meant)), f"I said {meant}. ", fact_text, flags=re.I
    )
    clauses = split_clauses(fact_text)
    said = [i for i, c in enumerate(clauses) if meant.lower() in c.text.lower()]
    # Before the word is said again the clauses are about something else ("sorry, my English").
    start = said[0] + 1 if said else 0
    for clause in clauses[start:]:
        spoken = clause.text.strip(" .!,;:-")
        found = _SAYS_WHAT_IT_IS.match(spoken)
        statement = _statement_of(found, meant) if found else None
        if found and statement is not None:
            # A sentence of its own, so what the clause ran on into stays out of the fact.
            at = fact_text.find(found.group(0))
            end = at + len(found.group(0))
            stop = "" if fact_text[end : end + 1] in (".", "!", "?") else "."
            return f"{fact_text[:at]}{statement}{stop}{fact_text[end:]}"
        if not _ASIDE.fullmatch(spoken):
            # A statement in between is what a pronoun after it points at.
            break
    return fact_text


# What may stand between the word and what it is: a spelling ("G-R-E-T-E", "with one N").
_ASIDE = re.compile(r"(?:[A-Za-z](?:-[A-Za-z])+|with (?:a|an|one|two|double) \w+|\w+)", re.I)


def _statement_of(found: re.Match[str], meant: str) -> str | None:
    what = found.group("what").lower()
    words = what.split()
    if words[-1] in _ALLERGY and found.group("det"):
        return f"I'm allergic to {meant}"
    if what in PERSON_ROLES or words[-1] in PERSON_ROLES:
        return f"my {what} is {meant}"
    # "is my language", "that's my hometown": a thing of the user's, pointed at by no pronoun
    # ("it is my job" points at the statement before it, not at the word).
    subject = found.group(0).lower().split()[0]
    if found.group("det") in ("my", "our") and len(words) == 1 and subject in ("is", "that's"):
        return f"{meant} is my {what}"
    return None
