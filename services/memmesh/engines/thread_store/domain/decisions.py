"""Decisions a conversation settled (seed 001 §2.18 `last_decisions`): the user's sentences
that choose, fix or agree on something, newest first, bounded and deterministic."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memmesh.engines.thread_store.domain.model import Role, Turn
from memmesh.engines.thread_store.domain.text import clip
from memmesh.text import sentences

MAX_DECISIONS = 5
MAX_DECISION_CHARS = 160

# A choice made: a verb of deciding with the speaker (or "we") as its subject, or the
# settled forms people use in speech ("let's go with", "going with", "final answer").
_DECIDED = re.compile(
    r"""\b(?:
        (?:i|we)(?:'ve|\s+have|'d|\s+had)?\s+(?:finally\s+|just\s+|already\s+)?
            (?:decided|chosen|chose|picked|settled|agreed|opted|committed|booked|signed)\b
      | (?:i|we)(?:'ll|\s+will)\s+(?:go|going)\s+(?:with|for)\b
      | (?:i|we)(?:'m|\s+am|'re|\s+are)\s+(?:going|gonna)\s+with\b
      | let'?s\s+(?:go\s+(?:with|for)|do\s+it|do\s+that|stick\s+with|settle\s+on|book|take)\b
      | (?:^|[,;]\s*)going\s+with\b
      | (?:^|[,;]\s*)(?:ok(?:ay)?|alright|right|fine)[,]?\s+(?:the|let'?s|we'?ll|i'?ll)\b.*\b(?:then|it\s+is)\b
      | \b(?:it'?s|that'?s)\s+(?:decided|settled|final)\b
      | \bfinal\s+(?:answer|decision|choice)\b
      | \bdecision\s+is\b
      | \bwe(?:'re|\s+are)\s+(?:doing|going\s+ahead\s+with)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# Deciding later, or not at all, is not a decision.
_UNDECIDED = re.compile(
    r"\b(?:haven'?t|have\s+not|not\s+yet|can'?t|cannot|couldn'?t|didn'?t|don'?t|undecided|"
    r"not\s+sure|should\s+we|shall\s+we|maybe|might|if\s+we|whether|tomorrow\s+we'?ll\s+decide)\b",
    re.IGNORECASE,
)


def is_decision(sentence: str) -> bool:
    """A statement (not a question) that settles a choice."""
    stripped = sentence.strip()
    if not stripped or stripped.endswith("?"):
        return False
    return bool(_DECIDED.search(stripped)) and not _UNDECIDED.search(stripped)


def decisions(turns: Sequence[Turn], limit: int = MAX_DECISIONS) -> list[tuple[str, str]]:
    """The user's decisions in the turns, newest first, each once and clipped, with the id
    of the turn that made it."""
    ordered = sorted(
        (t for t in turns if t.role == Role.USER), key=lambda t: (t.time_us, t.turn_id)
    )
    found: dict[str, str] = {}
    for turn in reversed(ordered):
        for sentence in reversed(sentences(turn.text)):
            if is_decision(sentence):
                found.setdefault(clip(" ".join(sentence.split()), MAX_DECISION_CHARS), turn.turn_id)
    return list(found.items())[:limit]
