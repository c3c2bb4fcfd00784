"""USER_PATTERN learned from what the user repeatedly asks for (seed 002 USER_PATTERN).

Each user turn yields behaviour observations: a request's normalised signature (the verb's
stem, the sorted stems of its object's content words) with the turn, session and time; never
the turn's words beyond the signature and a short label of the object. A signature seen in
enough turns across enough conversations becomes a pattern, scored with seed 002's four
factors; 0.75-0.79 is a proposal, 0.80 and above is applied. A pattern not observed for a
decay window loses confidence, and re-observation restores it. Pure and deterministic: the
same observations and `now` always give the same patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from memmesh.text import CONVERSATION_STOP_WORDS, INDEX_STOP_WORDS, stem, words

from .gates import USER_PATTERN_APPLY_BP, USER_PATTERN_MIN_BP
from .text import normalize, split_clauses

MICROS_PER_DAY = 86_400 * 1_000_000
# seed 002: USER_PATTERN decays over a 14-day window; each full window without an
# observation costs one repetition step, so a pattern seen 3+ times with clear consistency
# (0.90) is still applied after one window and gone after two.
DECAY_WINDOW_US = 14 * MICROS_PER_DAY
DECAY_STEP_BP = 1000
# Only the last four windows are evidence: older observations are evicted and never count.
SUPPORT_HORIZON_US = 4 * DECAY_WINDOW_US
# seed 002 excludes one-time actions: a habit is seen in 3 turns at least, and in 2
# conversations at least, since repeats inside one conversation are usually one task.
MIN_SUPPORT_TURNS = 3
MIN_SUPPORT_SESSIONS = 2
# Bounds on what is kept per turn and per user (the oldest are evicted first).
MAX_OBSERVATIONS_PER_TURN = 4
MAX_OBSERVATIONS_PER_USER = 400
MAX_OBJECT_WORDS = 6
MAX_EVIDENCE_TURNS = 8
PATTERN_KEY_PREFIX = "preference.pattern."

REQUEST, QUESTION, WANT = "request", "question", "want"
# The object words are scanned to the end of the clause, at most this far.
_MAX_SPAN_WORDS = 12
# Openings that make the next word the requested action ("can you play ...").
_ACTION_FRAMES = (
    ("i", "need", "you", "to"),
    ("i", "want", "you", "to"),
    ("i'd", "like", "you", "to"),
    ("i", "would", "like", "you", "to"),
    ("can", "you"),
    ("could", "you"),
    ("would", "you"),
    ("will", "you"),
    ("go", "ahead", "and"),
    ("let's",),
    ("please",),
)
# Words that lead into a clause without making it a request ("and then play ...").
_LEAD_WORDS = frozenset("and then also just now so ok okay oh hey".split())
# Openings of a wish: an action after "to", else the thing wished for ("I'd like a latte").
_WANT_FRAMES = (
    ("i", "would", "like"),
    ("i'd", "like"),
    ("i", "want"),
    ("i'll", "have"),
    ("i'll", "take"),
    ("can", "i", "get"),
    ("could", "i", "get"),
    ("can", "i", "have"),
    ("could", "i", "have"),
    ("may", "i", "have"),
)
_NEGATIONS = (("please", "don't"), ("don't",), ("do", "not"), ("never",))
# Verbs that open a bare imperative; after a request frame any verb is accepted.
_REQUEST_VERBS = frozenset(
    """play put throw queue shuffle skip pause resume start set turn switch open close lock
    unlock dim raise lower find show tell give read send text call message email remind add
    order book reserve buy make cook bake check look search recommend suggest plan schedule
    cancel translate explain summarize summarise write draft note save navigate take bring
    wake record list compare convert calculate define describe help teach quiz track log""".split()
)
# Intents said in other words: asking to be told something is asking about it.
_INTENT_OF = {
    ("tell",): "ask",
    ("show",): "ask",
    ("check",): "ask",
    ("give",): "ask",
    ("look", "up"): "ask",
    ("put", "on"): "play",
    ("throw", "on"): "play",
    ("queue", "up"): "play",
}
# Words of when and how often: the time buckets carry when, the support how often.
_TIME_WORDS = frozenset(
    """today tonight tomorrow yesterday now morning mornings evening evenings afternoon
    afternoons night nights weekend weekends week weekly daily every again later soon asap
    usual usually always often sometimes monday mondays tuesday tuesdays wednesday wednesdays
    thursday thursdays friday fridays saturday saturdays sunday sundays""".split()
)
# Nouns that name no particular thing when something more specific is said with them.
_GENERIC_NOUNS = frozenset("music song songs track tracks tune tunes option options".split())
_SKIPPED = CONVERSATION_STOP_WORDS | INDEX_STOP_WORDS | _TIME_WORDS
# Kept in a label between object words, so it reads ("weather in Lyon").
_LABEL_JOINERS = frozenset("in for to with at on from about of near".split())
_QUESTION_WORDS = frozenset("what what's who who's where where's when why how how's which".split())
_DAY_PARTS = ((5, "night"), (12, "morning"), (17, "afternoon"), (22, "evening"), (24, "night"))
_DAY_PART_WORDS = {
    "morning": "in the morning",
    "afternoon": "in the afternoon",
    "evening": "in the evening",
    "night": "at night",
}
_WEEKDAYS = "Mondays Tuesdays Wednesdays Thursdays Fridays Saturdays Sundays".split()


@dataclass(frozen=True)
class Observation:
    """One request of one turn: its signature and when and where it was made."""

    turn_id: str
    session_id: str
    observe_time_us: int
    # "<verb stem>|<sorted object stems>": what recurs.
    signature: str
    # The verb as said (base form) and the object's words as a short label, for the text.
    verb: str
    label: str
    kind: str = REQUEST
    # "don't play lo-fi": the user declined what the signature names.
    negated: bool = False


@dataclass(frozen=True)
class Pattern:
    """A recurring signature scored at `now`; applied at USER_PATTERN_APPLY_BP and above."""

    signature: str
    key: str
    text: str
    confidence_bp: int
    evidence_turn_ids: tuple[str, ...]
    last_seen_us: int
    support_turns: int
    support_sessions: int
    factors: tuple[tuple[str, int], ...]

    @property
    def applied(self) -> bool:
        return self.confidence_bp >= USER_PATTERN_APPLY_BP


@dataclass(frozen=True)
class ObservationErasure:
    """Which observations a forget takes: all of them, a conversation's, whole turns', a
    forgotten pattern's, or those whose object holds a forgotten term."""

    everything: bool = False
    session_ids: tuple[str, ...] = ()
    turn_ids: tuple[str, ...] = ()
    signatures: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()

    def covers(self, observation: Observation) -> bool:
        """True when the forget takes this observation."""
        if (
            self.everything
            or observation.session_id in self.session_ids
            or observation.turn_id in self.turn_ids
            or observation.signature in self.signatures
        ):
            return True
        # The object only: a forgotten "vegetarian" takes "order vegetarian", not every order.
        said = f"{observation.label}\n{observation.signature.partition('|')[2]}".casefold()
        return any(term.strip() and term.casefold() in said for term in self.terms)

    def is_empty(self) -> bool:
        return not (
            self.everything or self.session_ids or self.turn_ids or self.signatures or self.terms
        )


@dataclass(frozen=True)
class ObservationWrite:
    """What a commit does to the user's observations: erase, add, then evict the oldest."""

    added: tuple[Observation, ...] = ()
    erasure: ObservationErasure | None = None
    # Observations before this time are no evidence any more (the support horizon).
    keep_after_us: int = 0
    cap: int = MAX_OBSERVATIONS_PER_USER


def observe(text: str, turn_id: str, session_id: str, time_us: int) -> tuple[Observation, ...]:
    """The requests of one user turn, one per signature, at most MAX_OBSERVATIONS_PER_TURN."""
    found: dict[str, Observation] = {}
    for clause in split_clauses(normalize(text)):
        request = _request_of(words(clause.text), clause.is_question)
        if request is None:
            continue
        verb, kind, negated, object_words = request
        signature, label = _signature(verb, object_words)
        if signature and signature not in found:
            found[signature] = Observation(
                turn_id, session_id, time_us, signature, verb, label, kind, negated
            )
    return tuple(found.values())[:MAX_OBSERVATIONS_PER_TURN]


def _strip_frame(said: list[str], frames: Sequence[tuple[str, ...]]) -> int:
    """How many leading words one of the frames takes (0 for none)."""
    for frame in frames:
        if tuple(said[: len(frame)]) == frame:
            return len(frame)
    return 0


def _request_of(tokens: list[str], is_question: bool) -> tuple[str, str, bool, list[str]] | None:
    """(verb, kind, negated, object words) of a request clause; None for anything else."""
    said = [t.lower() for t in tokens]
    if not said or said[0] in ("if", "when", "whenever"):
        return None  # a condition or a hypothetical, not a request
    start, framed, negated, kind = 0, False, False, REQUEST
    while start < len(said) and said[start] in _LEAD_WORDS:
        start += 1
    while taken := _strip_frame(said[start:], _ACTION_FRAMES):
        start, framed = start + taken, True
    if taken := _strip_frame(said[start:], _NEGATIONS):
        start, framed, negated = start + taken, True, True
    elif said[start : start + 1] == ["stop"] and _is_gerund(said[start + 1 : start + 2]):
        start, framed, negated = start + 1, True, True  # "stop playing lo-fi"
    if not framed and (taken := _strip_frame(said[start:], _WANT_FRAMES)):
        start, kind = start + taken, WANT
        if said[start : start + 1] != ["to"]:
            return ("get", WANT, False, tokens[start:]) if start < len(said) else None
        start += 1
        framed = True
    if start >= len(said):
        return None
    verb = stem(said[start]) if negated and _is_gerund(said[start:]) else said[start]
    if not framed and (is_question or verb in _QUESTION_WORDS):
        return "ask", QUESTION, False, tokens
    if not framed and verb not in _REQUEST_VERBS:
        return None
    if verb in _SKIPPED or not verb.isalpha():
        return None
    rest = tokens[start + 1 :]
    for phrase, intent in _INTENT_OF.items():
        if tuple(said[start : start + len(phrase)]) == phrase:
            verb, rest = intent, tokens[start + len(phrase) :]
            break
    return verb, kind, negated, rest


def _signature(verb: str, tokens: Sequence[str]) -> tuple[str, str]:
    """("<verb stem>|<sorted object stems>", the object's label); ("", "") without an object.
    A generic noun ("music") counts only when nothing more specific is said with it."""
    span = list(tokens[:_MAX_SPAN_WORDS])
    content = [i for i, t in enumerate(span) if t.lower() not in _SKIPPED and not _is_filler(t)]
    content = content[:MAX_OBJECT_WORDS]
    if not content:
        return "", ""
    specific = [span[i] for i in content if span[i].lower() not in _GENERIC_NOUNS]
    stems = sorted({_stem(t) for t in specific or [span[i] for i in content]})
    label = [
        _label_word(t)
        for i, t in enumerate(span[content[0] : content[-1] + 1], start=content[0])
        if i in content or t.lower() in _LABEL_JOINERS
    ]
    return f"{stem(verb)}|{' '.join(stems)}", " ".join(label)


def _is_gerund(said: Sequence[str]) -> bool:
    return bool(said) and said[0].endswith("ing") and len(said[0]) > 5


def _is_filler(token: str) -> bool:
    return len(token) < 2 and not token.isdigit()


def _stem(token: str) -> str:
    return stem(token.lower().removesuffix("'s"))


def _label_word(token: str) -> str:
    # Names keep their capital; every other word is lower-cased.
    return token if token[:1].isupper() and token.lower() not in _SKIPPED else token.lower()


def pattern_key(signature: str) -> str:
    """The atom key of a signature's pattern (stable whatever the wording of its text)."""
    verb, _, objects = signature.partition("|")
    parts = [re.sub(r"[^a-z0-9+#'-]+", "-", part).strip("-") for part in (verb, *objects.split())]
    return PATTERN_KEY_PREFIX + "_".join(p for p in parts if p)[:96]


def day_part(time_us: int) -> str:
    """morning, afternoon, evening or night of a time (UTC: turns carry no time zone)."""
    hour = datetime.fromtimestamp(time_us / 1_000_000, UTC).hour
    return next(part for end, part in _DAY_PARTS if hour < end)


def weekday(time_us: int) -> int:
    """0 for Monday to 6 for Sunday (UTC)."""
    return datetime.fromtimestamp(time_us / 1_000_000, UTC).weekday()


def infer(observations: Iterable[Observation], now_us: int) -> list[Pattern]:
    """Every pattern at or above the proposal threshold at `now`, by key."""
    by_signature: dict[str, list[Observation]] = {}
    for observation in observations:
        by_signature.setdefault(observation.signature, []).append(observation)
    found = (assess(group, now_us) for group in by_signature.values())
    return sorted((p for p in found if p is not None), key=lambda p: p.key)


def assess(observations: Sequence[Observation], now_us: int) -> Pattern | None:
    """The pattern of one signature's observations at `now`; None below the thresholds."""
    ordered = sorted(
        (o for o in observations if now_us - SUPPORT_HORIZON_US <= o.observe_time_us <= now_us),
        key=lambda o: (o.observe_time_us, o.turn_id),
    )
    latest_of_turn = {o.turn_id: o for o in ordered if not o.negated}
    support = sorted(latest_of_turn.values(), key=lambda o: (o.observe_time_us, o.turn_id))
    sessions = {o.session_id for o in support}
    if len(support) < MIN_SUPPORT_TURNS or len(sessions) < MIN_SUPPORT_SESSIONS:
        return None
    last = support[-1]
    declined = any(o.negated and o.observe_time_us > last.observe_time_us for o in ordered)
    when = _when(support)
    factors = _factors(len(support), len(sessions), bool(when), declined)
    windows = (now_us - last.observe_time_us) // DECAY_WINDOW_US
    confidence = sum(bp for _, bp in factors) - DECAY_STEP_BP * windows
    if confidence < USER_PATTERN_MIN_BP:
        return None
    return Pattern(
        signature=last.signature,
        key=pattern_key(last.signature),
        text=_render(last, when),
        confidence_bp=confidence,
        evidence_turn_ids=tuple(o.turn_id for o in support[-MAX_EVIDENCE_TURNS:]),
        last_seen_us=last.observe_time_us,
        support_turns=len(support),
        support_sessions=len(sessions),
        factors=(*factors, ("decay", -DECAY_STEP_BP * windows)),
    )


def _factors(turns: int, sessions: int, timed: bool, declined: bool) -> tuple[tuple[str, int], ...]:
    """seed 002's four factors for a pattern, in basis points."""
    # Explicit mention: every evidence turn holds the signature itself.
    explicit = 3000
    # Repetition, counted in conversations: 2 is "twice", 3 or more is "3+ times".
    repetition = 2000 if sessions >= 3 else 1000
    # Consistency: at a regular time, and once per conversation rather than in bursts; the
    # user declining it since is a contradiction.
    steadiness = 1000 if 4 * sessions >= 3 * turns else 500 if 2 * sessions >= turns else 0
    consistency = (1000 if timed else 0) + steadiness - (2500 if declined else 0)
    # Type credibility: a USER_PATTERN repeated at least twice.
    credibility = 2000
    return (
        ("explicit", explicit),
        ("repetition", repetition),
        ("consistency", consistency),
        ("type_credibility", credibility),
    )


def _when(support: Sequence[Observation]) -> str:
    """When the user does it, if three quarters of the evidence agree ("in the evening")."""
    qualifiers = []
    parts = [day_part(o.observe_time_us) for o in support]
    top_part = max(sorted(set(parts)), key=parts.count)
    if 4 * parts.count(top_part) >= 3 * len(parts):
        qualifiers.append(_DAY_PART_WORDS[top_part])
    days = [weekday(o.observe_time_us) for o in support]
    top_day = max(sorted(set(days)), key=days.count)
    if all(day >= 5 for day in days):
        qualifiers.append("on weekends")
    elif 4 * days.count(top_day) >= 3 * len(days):
        qualifiers.append("on " + _WEEKDAYS[top_day])
    return " ".join(qualifiers)


def _render(latest: Observation, when: str) -> str:
    """The pattern as a statement about the user, in the words of its latest observation."""
    verb, _, _ = latest.signature.partition("|")
    if latest.kind == QUESTION or verb == "ask":
        doing = f"asks about {latest.label}"
    elif latest.kind == WANT and latest.verb == "get":
        doing = f"asks for {latest.label}"
    elif latest.kind == WANT:
        doing = f"wants to {latest.verb} {latest.label}"
    else:
        doing = f"asks to {latest.verb} {latest.label}"
    return " ".join(f"User often {doing} {when}".split()) + "."
