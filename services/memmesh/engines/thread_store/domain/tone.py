"""Emotional memory (seed 001 §2.3, Q18): how the user likes to be spoken to, learned from
what they say and how they react across sessions, delivered as tone labels only.

A user turn yields tone signals: a stated preference ("keep it short", "you can be more
casual"), a reaction ("that's way too long", "haha"), a mood ("rough day"), a milestone
("I got the job") or a ritual (opening with "good morning"). Each signal is stored with the
turn that gave it (so every erasure of that turn takes it too), never with any of the turn's
words. The labels of a moment weigh the signals heard, each halving with its own half-life,
and an opposite signal (brief against detailed) counts against it. A label is one of
TONE_LABELS, so nothing data-bearing can ever leave through them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from memmesh.engines.thread_store.domain.resume import DAY_US

# Signals kept per user (the newest); older ones have decayed to nothing anyway.
MAX_SIGNALS = 64
# The summed, decayed weight from which a label is given: one stated preference (3) for a
# half-life, or two reactions (2 x 1) within one.
LABEL_THRESHOLD = 1.5


class ToneSignal(StrEnum):
    """What a turn says about how to speak to the user; the value is the label given."""

    BRIEF = "brief"
    DETAILED = "detailed"
    CASUAL = "casual"
    FORMAL = "formal"
    PLAYFUL = "playful"
    SERIOUS = "serious"
    GENTLE = "gentle"
    SUPPORTIVE = "supportive"
    SLOWER = "slower pace"
    QUICKER = "quicker pace"
    CELEBRATORY = "celebratory"
    MORNING_GREETING = "morning greeting"


# Every label that can leave the ThreadStore, in the order labels are given.
TONE_LABELS: tuple[str, ...] = tuple(signal.value for signal in ToneSignal)

_OPPOSITES: dict[ToneSignal, ToneSignal] = {
    ToneSignal.BRIEF: ToneSignal.DETAILED,
    ToneSignal.DETAILED: ToneSignal.BRIEF,
    ToneSignal.CASUAL: ToneSignal.FORMAL,
    ToneSignal.FORMAL: ToneSignal.CASUAL,
    ToneSignal.PLAYFUL: ToneSignal.SERIOUS,
    ToneSignal.SERIOUS: ToneSignal.PLAYFUL,
    ToneSignal.SLOWER: ToneSignal.QUICKER,
    ToneSignal.QUICKER: ToneSignal.SLOWER,
}

# Preferences soften over two months; a mood over days; a milestone over a week.
_HALF_LIFE_DAYS: dict[ToneSignal, float] = {
    ToneSignal.SUPPORTIVE: 3.0,
    ToneSignal.CELEBRATORY: 7.0,
}
_DEFAULT_HALF_LIFE_DAYS = 60.0

STATED, REACTION = 3, 1

_NEGATED = re.compile(r"(?:\b(?:don't|do not|never|not|no need to)\s+(?:\w+\s+){0,2})$")

# (signal, weight, pattern). Patterns run on the lower-cased turn.
_RULES: tuple[tuple[ToneSignal, int, str], ...] = (
    (
        ToneSignal.BRIEF,
        STATED,
        r"\b(?:keep|make)\s+(?:it|things|them|your\s+(?:answers?|replies|responses))\s+"
        r"(?:short|brief|quick|concise|snappy|simple)\b",
    ),
    (
        ToneSignal.BRIEF,
        STATED,
        r"\b(?:shorter|briefer|more\s+concise|short|quick)\s+(?:answers?|replies|responses)\b",
    ),
    (ToneSignal.BRIEF, STATED, r"\bbe\s+(?:more\s+)?(?:brief|concise|succinct)\b"),
    (ToneSignal.BRIEF, STATED, r"\b(?:get|cut|skip)\s+(?:straight\s+)?to\s+the\s+point\b"),
    (ToneSignal.BRIEF, STATED, r"\bjust\s+the\s+(?:short|quick)\s+version\b"),
    (ToneSignal.BRIEF, STATED, r"\b(?:less|fewer)\s+(?:detail|details|words|talking)\b"),
    (
        ToneSignal.BRIEF,
        REACTION,
        r"\b(?:that's|that\s+is|this\s+is|that\s+was|way|far)\s+too\s+(?:long|wordy|much)\b",
    ),
    (ToneSignal.BRIEF, REACTION, r"\btoo\s+much\s+(?:detail|info|information|talking)\b"),
    (ToneSignal.BRIEF, REACTION, r"\b(?:stop|quit)\s+rambling\b|\btl;?dr\b"),
    (ToneSignal.DETAILED, STATED, r"\b(?:more|in(?:\s+(?:more|great|full))?)\s+detail\b"),
    (
        ToneSignal.DETAILED,
        STATED,
        r"\bexplain\s+(?:it\s+|that\s+|things\s+)?(?:more|further|in\s+depth|fully)\b",
    ),
    (ToneSignal.DETAILED, STATED, r"\bgo\s+(?:into|in)\s+(?:more\s+)?(?:depth|detail)\b"),
    (
        ToneSignal.DETAILED,
        STATED,
        r"\b(?:longer|more\s+thorough|fuller|detailed)\s+(?:answers?|explanations?|replies)\b",
    ),
    (ToneSignal.DETAILED, REACTION, r"\belaborate\b|\bwalk\s+me\s+through\b"),
    (
        ToneSignal.CASUAL,
        STATED,
        r"\b(?:be|talk|speak|keep\s+it)\s+(?:more\s+|a\s+bit\s+more\s+)?"
        r"(?:casual|relaxed|informal|laid[-\s]back)\b",
    ),
    (
        ToneSignal.CASUAL,
        STATED,
        r"\b(?:less|not\s+so|don't\s+be\s+so|no\s+need\s+to\s+be(?:\s+so)?)\s+formal\b",
    ),
    (ToneSignal.CASUAL, STATED, r"\btalk\s+(?:to\s+me\s+)?like\s+a\s+friend\b|\bloosen\s+up\b"),
    (
        ToneSignal.FORMAL,
        STATED,
        r"\b(?:be|keep\s+it|stay|talk|speak)\s+(?:more\s+)?(?:formal|professional)\b",
    ),
    (
        ToneSignal.FORMAL,
        STATED,
        r"\b(?:less|not\s+so|don't\s+be\s+so)\s+(?:casual|informal|chummy|familiar)\b",
    ),
    (
        ToneSignal.PLAYFUL,
        STATED,
        r"\b(?:you\s+can|feel\s+free\s+to|go\s+ahead\s+and)\s+"
        r"(?:joke|be\s+(?:funny|silly|playful|cheeky)|tease\s+me)\b",
    ),
    (
        ToneSignal.PLAYFUL,
        STATED,
        r"\bi\s+(?:love|like|enjoy)\s+(?:your|the|a\s+good)\s+(?:jokes|humou?r|puns|banter)\b",
    ),
    (ToneSignal.PLAYFUL, STATED, r"\bmake\s+me\s+laugh\b"),
    (
        ToneSignal.PLAYFUL,
        REACTION,
        r"\b(?:ha(?:ha)+|lol|lmao|that's\s+(?:hilarious|so\s+funny|funny))\b",
    ),
    (
        ToneSignal.SERIOUS,
        STATED,
        r"\b(?:no\s+more|stop\s+(?:the|with\s+the)|enough\s+with\s+the|cut\s+the|no)\s+"
        r"(?:jokes|joking|puns|humou?r|banter)\b",
    ),
    (ToneSignal.SERIOUS, STATED, r"\b(?:stop|quit)\s+joking\b|\bbe\s+serious\b"),
    (ToneSignal.SERIOUS, REACTION, r"\b(?:that's\s+)?not\s+funny\b"),
    (
        ToneSignal.GENTLE,
        STATED,
        r"\bbe\s+(?:gentle|patient|soft|kind|easy)\s+(?:with|on)\s+me\b|\bgo\s+easy\s+on\s+me\b",
    ),
    (
        ToneSignal.SUPPORTIVE,
        STATED,
        r"\bi(?:'m|\s+am)\s+(?:feeling\s+)?(?:so\s+|really\s+|pretty\s+|a\s+bit\s+|very\s+|kind\s+of\s+)?"
        r"(?:down|sad|depressed|anxious|stressed|overwhelmed|lonely|exhausted|burn(?:ed|t)\s+out|"
        r"upset|heartbroken|grieving|miserable)\b",
    ),
    (
        ToneSignal.SUPPORTIVE,
        STATED,
        r"\b(?:rough|hard|terrible|awful|horrible|tough|bad)\s+(?:day|week|night|time)\b",
    ),
    (
        ToneSignal.SLOWER,
        STATED,
        r"\bslow\s+down\b|\b(?:speak|talk)\s+(?:more\s+|a\s+bit\s+)?slow(?:er|ly)\b|"
        r"\b(?:you're|you\s+are)\s+(?:talking|speaking|going)\s+too\s+fast\b",
    ),
    (
        ToneSignal.QUICKER,
        STATED,
        r"\bspeed\s+up\b|\b(?:speak|talk)\s+(?:a\s+bit\s+)?faster\b|"
        r"\b(?:you're|you\s+are)\s+(?:talking|speaking|going)\s+too\s+slow(?:ly)?\b",
    ),
    (
        ToneSignal.CELEBRATORY,
        STATED,
        r"\bi\s+(?:just\s+|finally\s+)?(?:got|landed)\s+(?:the\s+|a\s+|my\s+)?"
        r"(?:job|promotion|offer|raise|scholarship|visa)\b|\b(?:got|been|was)\s+promoted\b|"
        r"\b(?:we|i)\s+(?:just\s+)?got\s+(?:engaged|married)\b|"
        r"\bi\s+(?:just\s+|finally\s+)?(?:passed|aced)\s+(?:my|the)\b|\bi\s+(?:just\s+)?graduated\b|"
        r"\bi(?:'m|\s+am)\s+(?:so\s+)?(?:thrilled|over\s+the\s+moon|so\s+excited)\b",
    ),
    (ToneSignal.MORNING_GREETING, REACTION, r"^\W*(?:good\s+)?morning\b"),
)
_COMPILED = tuple((signal, weight, re.compile(pattern)) for signal, weight, pattern in _RULES)


@dataclass(frozen=True)
class HeardSignal:
    """A tone signal as stored: what, how strongly, when, and the turn that gave it."""

    signal: ToneSignal
    weight: int
    time_us: int
    turn_id: str


def tone_signals(text: str) -> tuple[tuple[ToneSignal, int], ...]:
    """The (signal, weight) a user turn gives, at most one per signal (the strongest), in
    ToneSignal order; a signal under a negation ("don't keep it short") is not heard."""
    lowered = text.lower().replace("’", "'")
    heard: dict[ToneSignal, int] = {}
    for signal, weight, pattern in _COMPILED:
        if weight <= heard.get(signal, 0):
            continue
        for match in pattern.finditer(lowered):
            before = lowered[max(0, match.start() - 30) : match.start()]
            negation_inside = match.group(0).startswith(("don't", "not", "no "))
            if negation_inside or not _NEGATED.search(before):
                heard[signal] = weight
                break
    return tuple((signal, heard[signal]) for signal in ToneSignal if signal in heard)


def _weight_now(signal: HeardSignal, now_us: int) -> float:
    half_life = _HALF_LIFE_DAYS.get(signal.signal, _DEFAULT_HALF_LIFE_DAYS) * DAY_US
    age = max(0, now_us - signal.time_us)
    return float(signal.weight * 0.5 ** (age / half_life))


def learned_tone(heard: Iterable[HeardSignal], now_us: int) -> tuple[str, ...]:
    """The tone labels the signals heard give at `now_us`, in TONE_LABELS order: those whose
    decayed weight, less their opposite's, reaches LABEL_THRESHOLD. Signals from the future
    (a clock behind the turn's) count as just heard."""
    totals: dict[ToneSignal, float] = {}
    for one in heard:
        totals[one.signal] = totals.get(one.signal, 0.0) + _weight_now(one, now_us)
    labels = []
    for signal in ToneSignal:
        against = totals.get(_OPPOSITES[signal], 0.0) if signal in _OPPOSITES else 0.0
        if totals.get(signal, 0.0) - against >= LABEL_THRESHOLD:
            labels.append(signal.value)
    return tuple(labels)
