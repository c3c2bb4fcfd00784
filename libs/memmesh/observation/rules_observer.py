"""The deterministic Observer: each user sentence worth keeping becomes one observation,
cleaned of fillers, told in the third person and classified by cue rules. It is the mode
`deterministic_only` and the fallback of every semantic batch. Same turns, same bytes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.extraction.semantic.redaction import redact
from memmesh.observation.cues import UNDECIDED, kind_of
from memmesh.observation.model import (
    MAX_OBSERVATION_CHARS,
    Observation,
    ObservationKind,
    ObservedTurn,
)
from memmesh.observation.rewrite import (
    bounded,
    clean,
    content_stems,
    is_choice,
    question_text,
    third_person,
)
from memmesh.text import sentences

# Kept first when a batch has more observations than its cap.
_KEEP_ORDER = (
    ObservationKind.DECISION,
    ObservationKind.PLAN,
    ObservationKind.QUESTION,
    ObservationKind.PREFERENCE,
    ObservationKind.FACT,
    ObservationKind.EVENT,
)
_SETTLES = (ObservationKind.DECISION, ObservationKind.PLAN)
# "Let's go with that": the decision names the assistant's last proposal.
_POINTS_BACK = re.compile(r"\b(?:that|it|this|those|them|(?:this|that)\s+one)$", re.IGNORECASE)
_PROPOSAL = re.compile(
    r"\b(?:how\s+about|what\s+about|i'd\s+suggest|i\s+suggest|i'd\s+recommend|i\s+recommend"
    r"|you\s+could\s+(?:go\s+with|try|use|pick)|consider)\s+(?P<what>[^.?!,;]+)",
    re.IGNORECASE,
)
_ASSISTANT_PRONOUNS = re.compile(r"\byour\b|\byou\b", re.IGNORECASE)
# Fewer content words than this and a sentence says nothing to keep ("Sounds good to me").
_MIN_CONTENT_WORDS = 2
_MIN_FACT_WORDS = 3


@dataclass(frozen=True)
class _Said:
    """A user sentence in reading order, cleaned, with its kind and the turns that say it."""

    position: int
    turn_index: int
    text: str
    kind: ObservationKind
    turn_ids: tuple[str, ...]


def _user_sentences(turns: Sequence[ObservedTurn]) -> list[_Said]:
    said: list[_Said] = []
    for turn_index, turn in enumerate(turns):
        if turn.role != "user":
            continue
        # Credentials and INTERNAL_ONLY sentences never become observations.
        for sentence in sentences(redact(turn.text).text):
            cleaned = clean(sentence)
            kind = kind_of(cleaned)
            turn_ids: tuple[str, ...] = (turn.turn_id,)
            proposal = _proposal_before(turns, turn_index)
            if kind is ObservationKind.DECISION and proposal and _POINTS_BACK.search(cleaned):
                cleaned = _POINTS_BACK.sub(proposal[0], cleaned)
                turn_ids = (proposal[1], turn.turn_id)
            if kind is None or "[REDACTED" in cleaned or not _says_something(cleaned, kind):
                continue
            said.append(_Said(len(said), turn_index, cleaned, kind, turn_ids))
    return said


def _says_something(sentence: str, kind: ObservationKind) -> bool:
    """Enough content words, and a fact needs a clause, not a fragment ("Eight people")."""
    if len(content_stems(sentence)) < _MIN_CONTENT_WORDS:
        return False
    return kind is not ObservationKind.FACT or len(sentence.split()) >= _MIN_FACT_WORDS


def _still_open(question: _Said, said: Sequence[_Said], turns: Sequence[ObservedTurn]) -> bool:
    """A choice stays open until a later decision or plan shares a content word with it; a
    question for information, until the assistant speaks after it."""
    if is_choice(question.text) or UNDECIDED.search(question.text):
        about = content_stems(question.text)
        return not any(
            later.kind in _SETTLES and about & content_stems(later.text)
            for later in said[question.position + 1 :]
        )
    return all(t.role == "user" for t in turns[question.turn_index + 1 :])


def _proposal_before(turns: Sequence[ObservedTurn], turn_index: int) -> tuple[str, str] | None:
    """The last proposal of the assistant turn just before a user turn, and that turn's id."""
    previous = turns[turn_index - 1] if turn_index > 0 else None
    if previous is None or previous.role != "assistant":
        return None
    proposals = list(_PROPOSAL.finditer(redact(previous.text).text))
    if not proposals or "[REDACTED" in proposals[-1].group("what"):
        return None
    what = _ASSISTANT_PRONOUNS.sub(
        lambda m: "their" if m.group(0).lower() == "your" else "them",
        proposals[-1].group("what").strip(),
    )
    return what, previous.turn_id


def _observation(
    said: _Said, everything: Sequence[_Said], turns: Sequence[ObservedTurn]
) -> Observation | None:
    if said.kind is ObservationKind.QUESTION:
        if not _still_open(said, everything, turns):
            return None
        text = question_text(said.text, still_open=True)
    else:
        text = third_person(said.text, decision=said.kind is ObservationKind.DECISION)
    return Observation(bounded(text, MAX_OBSERVATION_CHARS), said.kind, said.turn_ids)


def observe_by_rules(
    turns: Sequence[ObservedTurn], max_observations: int
) -> tuple[Observation, ...]:
    """Observations of turns in reading order: at most `max_observations`, decisions and
    plans kept first when there are more, told in conversation order, none repeated."""
    said = _user_sentences(turns)
    found: dict[str, tuple[int, Observation]] = {}
    for item in said:
        observation = _observation(item, said, turns)
        if observation is not None and observation.text:
            found.setdefault(observation.text.casefold(), (item.position, observation))
    ranked = sorted(found.values(), key=lambda p: (_KEEP_ORDER.index(p[1].kind), p[0]))
    kept = sorted(ranked[:max_observations], key=lambda p: p[0])
    return tuple(observation for _, observation in kept)
