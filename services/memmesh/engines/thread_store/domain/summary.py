"""Rolling summaries and session digests: extractive, bounded and deterministic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.engines.thread_store.domain.decisions import decisions
from memmesh.engines.thread_store.domain.loops import loop_order
from memmesh.engines.thread_store.domain.model import (
    DEFAULT_BOUNDS,
    Digest,
    DigestBounds,
    Episode,
    Loop,
    Role,
    Turn,
)
from memmesh.engines.thread_store.domain.salience import (
    fill_budget,
    ranked_entities,
    salient_sentences,
    title_of,
)
from memmesh.engines.thread_store.domain.text import clip
from memmesh.text import sentences

SUMMARY_MAX_CHARS = DEFAULT_BOUNDS.summary_chars
TITLE_MAX_CHARS = 60
MAX_QUESTION_CHARS = 160
# A rolling summary only needs the newest user turns to fill its budget.
SUMMARY_WINDOW_TURNS = 24
# A digest (and the Observer) reads at most this many of a session's newest turns.
DIGEST_WINDOW_TURNS = 400


@dataclass(frozen=True)
class Summary:
    text: str
    evidence_turn_ids: tuple[str, ...]


def summarise(turns: Sequence[Turn], max_chars: int = SUMMARY_MAX_CHARS) -> Summary:
    """Salient sentences of the user turns, newest kept first within the budget, told in time order."""
    ordered = sorted(
        (t for t in turns if t.role == Role.USER), key=lambda t: (t.time_us, t.turn_id)
    )
    newest_first = (
        (position, rank, sentence, ordered[position].turn_id)
        for position in range(len(ordered) - 1, -1, -1)
        for rank, sentence in enumerate(salient_sentences(ordered[position].text))
    )
    return Summary(*fill_budget(newest_first, max_chars))


def unresolved_questions(
    turns: Sequence[Turn], limit: int = DEFAULT_BOUNDS.unresolved
) -> list[str]:
    """User questions no assistant turn followed, and a last assistant question the user left open."""
    ordered = sorted(turns, key=lambda t: (t.time_us, t.turn_id))
    found: list[str] = []
    for index, turn in enumerate(ordered):
        answered = any(later.role != turn.role for later in ordered[index + 1 :])
        if answered:
            continue
        questions = [s for s in sentences(turn.text) if s.endswith("?")]
        found.extend(clip(q, MAX_QUESTION_CHARS) for q in questions)
    return list(dict.fromkeys(found))[-limit:]


def build_digest(
    thread_id: str,
    turns: Sequence[Turn],
    thread_loops: Sequence[Loop],
    update_us: int | None = None,
    bounds: DigestBounds = DEFAULT_BOUNDS,
) -> Digest:
    """The digest of a session: summary fields and evidence turn ids, never a transcript.
    `update_us` is the session's last turn time when the turns given leave some out."""
    ordered = sorted(turns, key=lambda t: (t.time_us, t.turn_id))
    user_texts = [t.text for t in ordered if t.role == Role.USER]
    key_entities = tuple(ranked_entities(user_texts)[: bounds.key_entities])
    summary = summarise(ordered, bounds.summary_chars)
    open_loops = loop_order([loop for loop in thread_loops if loop.is_open])
    decided = decisions(ordered, bounds.decisions)
    times = {t.turn_id: t.time_us for t in ordered}
    cited = (
        set(summary.evidence_turn_ids)
        | {loop.source_turn_id for loop in open_loops if loop.source_turn_id in times}
        | {turn_id for _, turn_id in decided}
    )
    evidence = sorted(cited, key=lambda turn_id: (times[turn_id], turn_id))[-bounds.evidence :]
    return Digest(
        thread_id=thread_id,
        title=title_of(user_texts, key_entities, TITLE_MAX_CHARS),
        summary=summary.text,
        key_entities=key_entities,
        unresolved_questions=tuple(unresolved_questions(ordered, bounds.unresolved)),
        next_step=open_loops[0].text if open_loops else "",
        evidence_turn_ids=tuple(evidence),
        update_us=update_us if update_us is not None else (ordered[-1].time_us if ordered else 0),
        has_open_loops=bool(open_loops),
        last_decisions=tuple(text for text, _ in decided),
    )


def says_something(digest: Digest | Episode) -> bool:
    """Whether a digest holds anything to find. A session none of whose turns a summary could
    quote (a Brief with nothing said, turns all forgotten) closes with an empty digest: kept
    as its thread's record, but not indexed, where it would take a bundle's place for
    nothing."""
    if isinstance(digest, Episode):
        return bool(digest.summary or digest.evidence_turn_ids)
    return bool(
        digest.summary
        or digest.evidence_turn_ids
        or digest.next_step
        or digest.unresolved_questions
        or digest.last_decisions
    )


def index_id(digest: Digest | Episode) -> str:
    """The id a digest is indexed under: its episode id, or its thread id."""
    return digest.episode_id if isinstance(digest, Episode) else digest.thread_id
