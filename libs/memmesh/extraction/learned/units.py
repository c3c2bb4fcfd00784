"""The units the learned heads classify: a turn's clauses, each seen with its whole turn.

A clause alone misreads "so none of that ever please" and a turn alone cannot say which of
its clauses holds the fact; the features pair the two embeddings with the rule markers the
seed 000 exclusions are built on.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..commands import is_command_clause
from ..lexicon import WEEKDAYS
from ..markers import (
    HEDGED,
    HYPOTHETICAL,
    PLAN,
    QUESTION,
    SARCASM,
    THIRD_PARTY_OPINION,
    TIME_BOUND,
    VENTING,
    is_emotion,
    turn_markers,
)
from ..rules import turn_clauses
from ..text import Clause

MARKERS = (HEDGED, HYPOTHETICAL, PLAN, QUESTION, SARCASM, THIRD_PARTY_OPINION, TIME_BOUND, VENTING)


class TextEncoder(Protocol):
    """What the heads need of a sentence encoder (memmesh.embedding's Encoder satisfies it)."""

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def clear_cache(self) -> None:
        """Drop every vector kept of texts encoded before."""
        ...


@dataclass(frozen=True)
class Unit:
    """One clause of a turn with the signals the rules read from it."""

    clause: Clause
    turn: str
    markers: frozenset[str]
    is_command: bool
    is_emotion: bool

    @property
    def text(self) -> str:
        return self.clause.text


def turn_units(normalized_turn: str) -> list[Unit]:
    """Every clause of a normalised turn, in order, as the rules split it."""
    clauses = turn_clauses(normalized_turn)
    commands = _command_clauses(clauses)
    # "let's get back to the visa thread, I'm Brazilian by the way": what the user says of
    # themselves is read in the context of what else they say, not of the request beside it.
    said = (
        ", ".join(c.text for i, c in enumerate(clauses) if i not in commands)
        if commands
        else normalized_turn
    )
    return [
        Unit(
            clause=clause,
            turn=normalized_turn if position in commands or not said else said,
            markers=markers,
            is_command=position in commands,
            is_emotion=is_emotion(clause.text),
        )
        for position, (clause, markers) in enumerate(
            zip(clauses, turn_markers(clauses), strict=True)
        )
    ]


def _command_clauses(clauses: tuple[Clause, ...]) -> set[int]:
    """The positions of clauses that carry a command, a terse one cut at its colon included
    ("Resume: tax return." is one command, not a verb and a topic)."""
    found = {i for i, clause in enumerate(clauses) if is_command_clause(clause.text)}
    for i in range(len(clauses) - 1):
        verb, topic = clauses[i], clauses[i + 1]
        if (
            i not in found
            and len(verb.text.split()) == 1
            and verb.sentence == topic.sentence
            and is_command_clause(f"{verb.text}: {topic.text}")
        ):
            found |= {i, i + 1}
    return found


_CONTINUATION = re.compile(
    r"^(?:he|she|they|it|its|his|her|their|them|him|who|which|that|this|these|those|"
    r"he's|she's|they're|it's|that's|there|and (?:he|she|they|it))\b",
    re.I,
)


def is_continuation(text: str) -> bool:
    """True when a clause goes on about what the clause before it named ("…, she lives in
    Cork"), so it adds to that fact instead of making one of its own."""
    return bool(_CONTINUATION.match(text.strip()))


_FIRST_PERSON = frozenset({"i", "i'm", "i've", "my", "me", "mine", "we", "our", "us", "we're"})


def is_fragment_tail(unit: Unit, previous: Unit | None) -> bool:
    """True for a short lowercase fragment after a clause of the same sentence ("PhD student,
    linguistics", "half Filipino, half Scottish", "from Cork, born and raised"): it completes
    the clause before it, so it holds no fact of its own."""
    if previous is None or previous.clause.sentence != unit.clause.sentence or unit.is_command:
        return False
    words = unit.text.strip(" ,.!?;:").split()
    return (
        0 < len(words) <= 3
        and words[0][:1].islower()
        and not any(w.lower() in _FIRST_PERSON for w in words)
    )


def feature_width(encoder_dimension: int) -> int:
    """Clause vector, turn vector, one flag per marker, command, emotion, first person,
    continuation, opens a statement, short clause, habit, standing instruction."""
    return 2 * encoder_dimension + len(MARKERS) + 8


_DAYS = "|".join(sorted(WEEKDAYS))
# "I play pickup basketball every Sunday", "I pray five times a day": a frequency says the
# clause tells what keeps happening, not what happened once.
_HABIT = re.compile(
    rf"\b(?:every (?:single )?(?:day|morning|night|evening|week|weekend|month|year|{_DAYS})|"
    rf"each (?:day|morning|night|week)|(?:once|twice|\w+ times) (?:a|per) (?:day|week|month)|"
    rf"usually|normally|typically|generally|most (?:days|mornings|nights|weekends)|"
    rf"on (?:weekends|weekdays|(?:{_DAYS})s)|daily|weekly|nightly|without fail)\b",
    re.I,
)
# "please don't book anything over prayer times", "never suggest phone calls": how the user
# wants to be treated from now on.
_STANDING_INSTRUCTION = re.compile(
    r"^(?:\w+\s+){0,2}?(?:please\s+)?(?:don't|dont|do not|never|always|no more|stop)\s+\w+",
    re.I,
)


# What a turn may have around its one clause and still say just that clause.
_OUTER = " \t.!?,;:"


def unit_features(units: Sequence[Unit], encoder: TextEncoder) -> np.ndarray:
    """One feature row per unit; the turn is encoded once however many clauses it has."""
    if not units:
        return np.zeros((0, feature_width(encoder.dimension)), dtype=np.float32)
    texts = [u.text for u in units]
    clauses_of = Counter(u.turn for u in units)
    # A turn that says no more than its one clause is not encoded again: its vector is the
    # clause's ("I live in Osaka." and its clause "I live in Osaka"), one encode saved on most
    # spoken turns, with the same cross-validated figures.
    turn_index: dict[str, int] = {}
    for position, unit in enumerate(units):
        if unit.turn in turn_index:
            continue
        if clauses_of[unit.turn] == 1 and unit.turn.strip(_OUTER) == unit.text.strip(_OUTER):
            turn_index[unit.turn] = position
        else:
            turn_index[unit.turn] = len(texts)
            texts.append(unit.turn)
    vectors = encoder.encode(texts)
    clause_vectors = vectors[: len(units)]
    turn_vectors = vectors[[turn_index[u.turn] for u in units]]
    flags = np.array(
        [
            [float(m in u.markers) for m in MARKERS]
            + [
                float(u.is_command),
                float(u.is_emotion),
                float(_first_person(u.text)),
                float(is_continuation(u.text)),
                float(opens_statement(u)),
                float(len(u.text.split()) <= 3),
                float(bool(_HABIT.search(u.text))),
                float(bool(_STANDING_INSTRUCTION.match(u.text))),
            ]
            for u in units
        ],
        dtype=np.float32,
    )
    return np.hstack([clause_vectors, turn_vectors, flags]).astype(np.float32)


# A clause joined by "and" ("also", "plus", "but") that opens on the user as its subject
# starts a statement of its own: "…and I play pickup basketball every Sunday". A bare comma
# more often goes on with the clause before ("I'm allergic to bee stings, I carry an EpiPen").
_OWN_SUBJECT = re.compile(
    r"^(?:(?:also|plus|now|still|yes|yeah|oh|and)\s+){0,2}"
    r"(?:I|I'm|I've|I'd|my|we|we're|we've|our)\b",
    re.I,
)
_JOINS_ALONGSIDE = frozenset({"and", "also", "plus", "but"})


def opens_statement(unit: Unit) -> bool:
    """True for the turn's first clause and for a later one that starts a statement of its
    own. Only the first clause of a turn used to count, so the head learned that a fact sits
    at the start and missed the second one of "I'm a retired nurse and I restore old clocks"."""
    if unit.clause.index == 0:
        return True
    return unit.clause.connector in _JOINS_ALONGSIDE and bool(_OWN_SUBJECT.match(unit.text))


def _first_person(text: str) -> bool:
    words = {w.strip(",.!?").lower() for w in text.split()}
    return bool(words & _FIRST_PERSON)
