"""Active loops (seed 003): commitments the user states, closed when the user says they are done."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from memmesh.engines.thread_store.domain.model import Loop, Role, Turn
from memmesh.engines.thread_store.domain.text import clip, content_stems
from memmesh.text import sentences

MAX_LOOP_CHARS = 80
# A user rarely has more open commitments than this; older ones stop being offered.
MAX_OPEN_LOOPS = 50

_OPENER = re.compile(
    r"\b(?:i\s+(?:really\s+|still\s+|just\s+)?(?:need|have|got|ought)\s+to|i\s+(?:should|must|gotta)"
    r"|i(?:'|’)ve\s+got\s+to|remind\s+me\s+to|i(?:'|’)ll|i\s+will)\s+"
    # The task ends at a clause break or where the next "... and I ..." begins.
    r"(?P<task>(?:(?!\s+and\s+(?:i|then)\b)[^,;.!?])+)",
    re.IGNORECASE,
)
# What follows "I'll" / "I should" without being a task.
_NOT_TASKS = re.compile(
    r"^(?:be|have\s+been|see|say|think|try|probably|never|always|maybe|just\s+say|tell\s+you|let\s+you"
    r"|keep\s+that\s+in\s+mind|get\s+back\s+to\s+you|take\s+it|pass|do\s+that|do\s+it)\b",
    re.IGNORECASE,
)
_TASK_END = re.compile(r"\s+(?:but|because|so|since|though|although|if)\s+.*$", re.IGNORECASE)
_URGENT = re.compile(
    r"\b(?:today|tonight|tomorrow|this\s+week|asap|urgent|before|by\s+\w+day)\b", re.IGNORECASE
)
_DONE = re.compile(
    r"\b(?:done|did|finished|completed|already|took\s+care|sorted|handled|booked|called|paid|bought|sent"
    r"|went|made|wrote|got|fixed|cancelled|canceled|scheduled|finally)\b"
    r"|\bi(?:'|’)ve\s+\w+ed\b|\bi\s+(?!need\b|feed\b)\w+ed\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:not|never)\b|n['’]t\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[,;]|\s+(?:but|and then|now)\s+", re.IGNORECASE)


def loop_id(tenant_id: str, user_id: str, turn_id: str, text: str) -> str:
    """Deterministic id of a loop opened by a turn."""
    digest = hashlib.sha256(
        "\x1f".join((tenant_id, user_id, turn_id, text.lower())).encode()
    ).hexdigest()
    return f"loop-{digest[:16]}"


def _task_text(raw: str) -> str:
    task = _TASK_END.sub("", raw.strip()).strip(" '\"")
    return clip(task[:1].upper() + task[1:], MAX_LOOP_CHARS) if task else ""


def commitments(text: str) -> list[tuple[str, int]]:
    """The (task text, salience) commitments a user utterance states, in order."""
    found: list[tuple[str, int]] = []
    for sentence in sentences(text):
        if sentence.endswith("?"):
            continue
        for match in _OPENER.finditer(sentence):
            raw = match.group("task")
            if _NOT_TASKS.match(raw.strip()):
                continue
            task = _task_text(raw)
            if not task or not content_stems(task):
                continue
            salience = (
                1
                + int(bool(_URGENT.search(raw)))
                + int(match.group(0).lower().startswith("remind"))
            )
            found.append((task, salience))
    return found


def _closes(clause: str, loop: Loop) -> bool:
    if (
        clause.rstrip().endswith("?")
        or not _DONE.search(clause)
        or _NEGATED.search(clause)
        or _OPENER.search(clause)
    ):
        return False
    said = set(content_stems(clause))
    shared = sum(1 for s in loop.stems if s in said)
    # A task starts with its verb; the verb alone ("I booked the hotel") names another task.
    objects = loop.stems[1:] if len(loop.stems) > 1 else loop.stems
    # Half the loop's content words, so "done with the dentist" closes "Book the dentist".
    return any(s in said for s in objects) and 2 * shared >= len(loop.stems)


def loop_changes(
    tenant_id: str, user_id: str, turn: Turn, open_loops: Sequence[Loop]
) -> tuple[list[Loop], list[Loop]]:
    """(loops closed, loops opened) by a turn; only user turns change loops."""
    if turn.role != Role.USER or not turn.text.strip():
        return [], []
    clauses = [c for s in sentences(turn.text) for c in _CLAUSE.split(s) if c and c.strip()]
    closed = []
    for loop in open_loops:
        if any(_closes(clause, loop) for clause in clauses):
            closed.append(_closed(loop, turn.turn_id))
    still_open = {frozenset(loop.stems) for loop in open_loops if loop not in closed}
    opened: list[Loop] = []
    for task, salience in commitments(turn.text):
        stems = content_stems(task)
        if frozenset(stems) in still_open:
            continue
        still_open.add(frozenset(stems))
        opened.append(
            Loop(
                loop_id=loop_id(tenant_id, user_id, turn.turn_id, task),
                thread_id=turn.session_id,
                text=task,
                stems=stems,
                salience=salience,
                open_us=turn.time_us,
                source_turn_id=turn.turn_id,
            )
        )
    return closed, opened


def _closed(loop: Loop, turn_id: str) -> Loop:
    return Loop(
        loop.loop_id,
        loop.thread_id,
        loop.text,
        loop.stems,
        loop.salience,
        loop.open_us,
        loop.source_turn_id,
        turn_id,
    )


def loop_order(loops: Sequence[Loop]) -> list[Loop]:
    """Most salient first, then newest, then id."""
    return sorted(loops, key=lambda loop: (-loop.salience, -loop.open_us, loop.loop_id))
