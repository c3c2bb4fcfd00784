"""The deterministic Reflector: a thread told in one short abstract ("Kitchen renovation
with Marco: chose oak cabinets; budget 12k. Open: whether to move the sink. Next: call
Marco on Monday.") and 1-3 "where we left off" bullets from its structured fields, never
its sentences strung together. The mode `deterministic_only` and every semantic fallback."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memmesh.observation.model import (
    MAX_LEFT_OFF,
    MAX_LEFT_OFF_CHARS,
    MAX_SUMMARY_CHARS,
    ConversationObservations,
    Observation,
    ObservationKind,
    ThreadState,
)
from memmesh.observation.rewrite import bounded

_FLAGS = re.IGNORECASE
# The user as the subject alone ("User and Marco are..." keeps its subject).
_USER_SUBJECT = re.compile(
    r"^(?:user's|user|they|the\s+user)\s+(?!and\b|with\b)(?:also\s+|really\s+)?", _FLAGS
)
_CHOSE = re.compile(
    r"^(?:(?:decided\s+to\s+)?(?:go|going)\s+with|will\s+(?:take|go\s+with)|chose|picked"
    r"|opted\s+for|settled\s+on|decided\s+on|went\s+with|agreed\s+on|is\s+going\s+with)\s+",
    _FLAGS,
)
_UNSURE = re.compile(
    r"^(?:is\s+(?:not\s+sure|unsure)|has\s+not\s+decided|hasn't\s+decided|asked)\s+(?=whether\b)"
    r"|^(?:should|shall)\s+(?:i|we)\s+",
    _FLAGS,
)
_PROGRESSIVE = re.compile(r"^(?:is|are)\s+(?=\w+ing\b)", _FLAGS)
_NEEDS = re.compile(r"^(?:needs|has|wants|plans|is\s+going)\s+to\s+", _FLAGS)
# "budget is 12k" -> "budget 12k": a short numeric fact loses its copula.
_NUMERIC_COPULA = re.compile(
    r"^(?P<what>(?:the\s+|their\s+)?[\w'-]+(?:\s+[\w'-]+)?)\s+(?:is|are)\s+(?P<value>\S*\d\S*)",
    _FLAGS,
)
_TOPIC_CHARS = 80
_MAX_DECISIONS = 2
_MAX_FACTS = 2


def _phrase(text: str) -> str:
    """An observation or thread field as a clause without its subject and final stop."""
    return _USER_SUBJECT.sub("", " ".join(text.split()).rstrip(".!?"))


def _names(thread: ThreadState, observations: Sequence[Observation]) -> frozenset[str]:
    """Words written capitalised inside a sentence, and every word of the key entities:
    names, which keep their capital."""
    texts = [thread.title, *(o.text for o in observations)]
    inside = (word for text in texts for word in text.split()[1:])
    entity_words = (word for entity in thread.key_entities for word in entity.split())
    return frozenset(
        word.strip(".,;:!?'\"") for word in (*inside, *entity_words) if word[:1].isupper()
    )


def _lowered(phrase: str, names: frozenset[str]) -> str:
    """A phrase inside a sentence: its first word in lower case unless it is a name."""
    first = phrase.split(" ", 1)[0].strip(".,;:!?'\"")
    keep = first in names or first.isupper() or first == "User"
    return phrase if keep else phrase[:1].lower() + phrase[1:]


def decision_phrase(text: str) -> str:
    """ "User decided to go with oak cabinets." -> "chose oak cabinets"."""
    phrase = _phrase(text)
    if chose := _CHOSE.match(phrase):
        return "chose " + phrase[chose.end() :]
    return phrase


def open_phrase(text: str) -> str:
    """ "Should we move the sink?" or "User is unsure whether to move the sink." -> "whether
    to move the sink"."""
    phrase = _phrase(text)
    if unsure := _UNSURE.match(phrase):
        rest = phrase[unsure.end() :]
        return rest if rest.lower().startswith("whether") else "whether to " + rest
    return phrase


def step_phrase(text: str) -> str:
    """ "User needs to call Marco on Monday." -> "call Marco on Monday"."""
    phrase = _phrase(text)
    for pattern in (_NEEDS, _PROGRESSIVE):
        phrase = pattern.sub("", phrase)
    return phrase


def fact_phrase(text: str) -> str:
    """ "User's budget is 12k." -> "budget 12k"; other facts keep their words."""
    phrase = _phrase(text)
    if numeric := _NUMERIC_COPULA.match(phrase):
        return f"{numeric.group('what')} {numeric.group('value')}".strip(" ,")
    return _PROGRESSIVE.sub("", phrase)


def _newest_first(items: Iterable[str], limit: int) -> list[str]:
    """The last `limit` distinct items, newest first; one said within another counts once."""
    kept: dict[str, str] = {}
    for item in reversed(list(items)):
        folded = item.casefold()
        if item and not any(folded in other or other in folded for other in kept):
            kept[folded] = item
    return list(kept.values())[:limit]


def _of_kind(observations: Sequence[Observation], *kinds: ObservationKind) -> list[Observation]:
    return [o for o in observations if o.kind in kinds]


def _salient(observation: Observation) -> bool:
    """A fact worth a summary's few words: it names a number or a name."""
    return any(c.isdigit() for c in observation.text) or any(
        w[:1].isupper() for w in observation.text.split()[1:]
    )


def _topic(thread: ThreadState, observations: Sequence[Observation]) -> str:
    """The title; else the key entities; else what the first statement was about."""
    if thread.title.strip():
        topic = thread.title.strip().rstrip(".")
    elif thread.key_entities:
        topic = ", ".join(thread.key_entities[:3])
    else:
        said = [o for o in observations if o.kind is not ObservationKind.QUESTION]
        topic = said[0].text.rstrip(".") if said else "This thread"
    return bounded(topic[:1].upper() + topic[1:], _TOPIC_CHARS)


def reflect_by_rules(
    thread: ThreadState, batches: Sequence[ConversationObservations]
) -> tuple[str, tuple[str, ...]]:
    """The summary and the "where we left off" bullets of a thread (batches in order)."""
    observations = [o for batch in batches for o in batch.observations]
    decisions = _newest_first(
        [
            *(decision_phrase(d) for d in thread.last_decisions),
            *(decision_phrase(o.text) for o in _of_kind(observations, ObservationKind.DECISION)),
        ],
        _MAX_DECISIONS,
    )
    facts = _newest_first(
        (
            fact_phrase(o.text)
            for o in _of_kind(observations, ObservationKind.FACT, ObservationKind.PREFERENCE)
            if _salient(o)
        ),
        _MAX_FACTS,
    )
    # The thread's own fields come last, so they win over an observation saying the same.
    questions = _newest_first(
        [
            *(open_phrase(o.text) for o in _of_kind(observations, ObservationKind.QUESTION)),
            *(open_phrase(q) for q in reversed(thread.unresolved_questions)),
        ],
        1,
    )
    steps = _newest_first(
        [
            *(step_phrase(o.text) for o in _of_kind(observations, ObservationKind.PLAN)),
            *([step_phrase(thread.next_step)] if thread.next_step.strip() else []),
        ],
        1,
    )
    names = _names(thread, observations)
    decisions, facts, questions, steps = (
        [_lowered(p, names) for p in group] for group in (decisions, facts, questions, steps)
    )
    topic = _topic(thread, observations)
    parts = [
        f"{topic}: {'; '.join([*reversed(decisions), *reversed(facts)])}."
        if decisions or facts
        else f"{topic}."
    ]
    parts += [f"Open: {q}." for q in questions]
    parts += [f"Next: {s}." for s in steps]
    summary = _fit(parts, MAX_SUMMARY_CHARS)
    return summary, _left_off(topic, decisions, questions, steps)


def _fit(parts: Sequence[str], limit: int) -> str:
    """Parts joined while they fit; the first is cut to fit when alone it does not."""
    text = ""
    for part in parts:
        candidate = f"{text} {part}".strip()
        if len(candidate) > limit:
            break
        text = candidate
    return text or bounded(parts[0], limit)


def _left_off(
    topic: str, decisions: Sequence[str], questions: Sequence[str], steps: Sequence[str]
) -> tuple[str, ...]:
    """Next step, newest decision, open question: each bounded; the topic when none is known."""
    bullets = [f"Next step: {s}" for s in steps[:1]]
    bullets += [f"Decided: {d}" for d in decisions[:1]]
    bullets += [f"Still open: {q}" for q in questions[:1]]
    bullets = bullets or [f"Last discussed: {topic}"]
    return tuple(bounded(b, MAX_LEFT_OFF_CHARS) for b in bullets[:MAX_LEFT_OFF])
