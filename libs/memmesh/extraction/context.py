"""What a rule sees of a clause, and the one way rules build candidates."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .lexicon import NON_PLACE_CAPITALS, NOT_A_NAME
from .markers import (
    HEDGED,
    HYPOTHETICAL,
    PLAN,
    QUESTION,
    SARCASM,
    THIRD_PARTY_OPINION,
    TIME_BOUND,
    VENTING,
)
from .model import Candidate, FactType
from .text import Clause, sentence_case_fact

# Exclusion markers each kind of rule honours. Rule 4 of the labelling rules: a persistent
# person is stored even inside plans, questions, tasks or episodic news.
SELF_STATEMENT_MARKERS = frozenset(
    {HYPOTHETICAL, HEDGED, PLAN, TIME_BOUND, QUESTION, SARCASM, THIRD_PARTY_OPINION, VENTING}
)
RELATIONSHIP_MARKERS = frozenset({HYPOTHETICAL, SARCASM})
INSTRUCTION_MARKERS = frozenset({HYPOTHETICAL, HEDGED, SARCASM, TIME_BOUND})

_DURABILITY = re.compile(
    r"\b(?:always|never|for years|all-time|all time|of all time|no exceptions|since I was|"
    r"whole life|through and through|have been for|always have been|never have been|forever|"
    r"strictly|every \w+|for (?:a living|decades))\b",
    re.I,
)
_NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve
thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty
seventy eighty ninety hundred thousand""".split()
)


@dataclass(frozen=True)
class ClauseContext:
    """A clause plus its neighbours, markers and any trailing standing marker."""

    clause: Clause
    clauses: tuple[Clause, ...]
    markers: frozenset[str]
    trailing: str

    @property
    def text(self) -> str:
        return self.clause.text

    def without(self, *markers: str) -> ClauseContext:
        """The same clause with the given markers dropped (what they flag is not the fact)."""
        return replace(self, markers=self.markers - set(markers))

    def previous(self) -> tuple[Clause, ...]:
        return self.clauses[: self.clause.index]

    def following(self) -> Clause | None:
        later = self.clauses[self.clause.index + 1 :]
        return later[0] if later else None

    def has_standing_marker(self) -> bool:
        return bool(
            re.search(
                r"\b(?:always|never|from now on|going forward|by default|ever|"
                r"every time|each time|whenever|all the time|in general|"
                r"no exceptions)\b",
                f"{self.text} {self.trailing}",
                re.I,
            )
        )


def build(
    ctx: ClauseContext,
    text: str,
    category: str,
    key: str,
    confidence_bp: int,
    honoured: frozenset[str],
    fact_type: FactType = FactType.USER_FACT,
    evidence: str | None = None,
) -> Candidate:
    """Build a candidate from a rendered fact, adding durability bonus and clause violations."""
    if _DURABILITY.search(f"{ctx.text} {ctx.trailing}"):
        confidence_bp += 300
    rendered = sentence_case_fact(text)
    return Candidate(
        text=rendered,
        category=category,
        type=fact_type,
        confidence_bp=max(0, min(10_000, confidence_bp)),
        key=key,
        critical_tokens=critical_tokens(rendered),
        evidence_span=evidence or ctx.text,
        violations=tuple(sorted(ctx.markers & honoured)),
    )


def appositive(ctx: ClauseContext) -> str:
    """A short verbless qualifier right after the fact, in parentheses ("I live in Lagos, mainland side",
    "I'm a translator, Korean to English"); "" when the next clause is not one."""
    following: Clause | None = ctx.following()
    if not following or following.sentence != ctx.clause.sentence or following.connector:
        return ""
    words = following.text.split()
    if not 1 <= len(words) <= 4 or following.is_question:
        return ""
    if re.search(
        r"\b(?:I|I'm|my|me|it|it's|that|this|is|are|was|have|has|been|do|not|no|so|"
        r"like|really|seriously|always|never|ever|and|or|everything|anything|lol)\b",
        following.text,
        re.I,
    ):
        return ""
    return f" ({following.text})"


def critical_tokens(fact_text: str) -> tuple[str, ...]:
    """Names, numbers, dates and amounts in a fact (Q13 critical tokens)."""
    tokens: list[str] = []
    words = re.findall(r"[^\W\d_][\w'.-]*|\d[\d:.,/%-]*|[$€£]\s?\d[\d.,]*", fact_text)
    for position, word in enumerate(words):
        bare = word.rstrip(".,").removesuffix("'s")
        if position == 0 and bare in ("User", "User's"):
            continue
        if bare[:1].isdigit() or bare[:1] in "$€£" or bare.lower() in _NUMBER_WORDS:
            tokens.append(bare)
        elif bare[:1].isupper() and bare not in ("User", "I") and len(bare) > 1:
            tokens.append(bare)
    return tuple(dict.fromkeys(tokens))


_NAME = r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?"


def last_capitalized_name(clauses: tuple[Clause, ...]) -> str | None:
    """The most recent capitalised name-like word before a pronoun ("if I mention Marcus, he's…")."""
    for clause in reversed(clauses):
        words = clause.text.split()
        for position in range(len(words) - 1, -1, -1):
            word = words[position].strip(",.!?").removesuffix("'s")
            if (
                word[:1].isupper()
                and word.isalpha()
                and word.lower() not in NON_PLACE_CAPITALS
                and word not in ("I", "User")
                and (position > 0 or clause.connector)
            ):
                return word
    return None


# A place after in/to/from ("flying home to Accra…"), said alone ("Hove, not Hull. That's where
# I live.") or naming a clock or the weather ("use Sydney time").
_PLACE_SAID = re.compile(
    r"\b(?:in|to|from|at|for)\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)|"
    r"^(?P<alone>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)$|"
    r"\b(?P<local>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)\s+(?:time|weather|traffic)\b"
)


# Words said alone that are no place ("Hi. That's where I live.").
_SAID_ALONE = frozenset(
    """hi hello hey thanks thank sorry sure great cool wait well right ok okay yes yeah yep no
    nope nah please cheers bye morning evening afternoon night anyway so oh wow true""".split()
)


def last_place(clauses: tuple[Clause, ...]) -> str | None:
    """The most recent capitalised place the clauses name (see _PLACE_SAID)."""
    for clause in reversed(clauses):
        places = [
            place
            for m in _PLACE_SAID.finditer(clause.text)
            if (place := m.group("place") or m.group("alone") or m.group("local"))
            and place.split()[0].lower() not in NON_PLACE_CAPITALS
            and not (m.group("alone") and place.lower() in _SAID_ALONE | NOT_A_NAME)
        ]
        if places:
            return places[-1]
    return None
