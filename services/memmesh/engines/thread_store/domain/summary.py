"""Rolling summaries and session digests: extractive, bounded and deterministic."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memmesh.engines.thread_store.domain.loops import loop_order
from memmesh.engines.thread_store.domain.model import Digest, Loop, Role, Turn
from memmesh.engines.thread_store.domain.text import (
    STOPWORDS,
    clip,
    content_stems,
    entities,
    sentences,
    words,
)

SUMMARY_MAX_CHARS = 600
MAX_SENTENCE_CHARS = 200
SENTENCES_PER_TURN = 2
TITLE_MAX_CHARS = 60
MAX_KEY_ENTITIES = 8
MAX_UNRESOLVED = 3
MAX_QUESTION_CHARS = 160
MAX_EVIDENCE = 20
# A rolling summary only needs the newest user turns to fill its budget.
SUMMARY_WINDOW_TURNS = 24
_NUMBER = re.compile(r"\d")


@dataclass(frozen=True)
class Summary:
    text: str
    evidence_turn_ids: tuple[str, ...]


def _salience(sentence: str) -> int:
    return 2 * len(entities(sentence)) + int(bool(_NUMBER.search(sentence))) + len(content_stems(sentence))


@lru_cache(maxsize=4096)
def _salient_sentences(text: str) -> tuple[str, ...]:
    """At most two sentences of a turn that carry content, in their spoken order (cached: a
    rolling summary re-reads the same recent turns on every append)."""
    candidates = [(index, s) for index, s in enumerate(sentences(text)) if len(content_stems(s)) >= 2]
    best = sorted(candidates, key=lambda item: (-_salience(item[1]), item[0]))[:SENTENCES_PER_TURN]
    return tuple(clip(s, MAX_SENTENCE_CHARS) for _, s in sorted(best))


def summarise(turns: Sequence[Turn], max_chars: int = SUMMARY_MAX_CHARS) -> Summary:
    """Salient sentences of the user turns, newest kept first within the budget, told in time order."""
    chosen: list[tuple[int, int, str, str]] = []
    seen: set[tuple[str, ...]] = set()
    used = 0
    ordered = sorted((t for t in turns if t.role == Role.USER), key=lambda t: (t.time_us, t.turn_id))
    for position in range(len(ordered) - 1, -1, -1):
        turn = ordered[position]
        for rank, sentence in enumerate(_salient_sentences(turn.text)):
            fingerprint = content_stems(sentence)
            cost = len(sentence) + (1 if chosen else 0)
            if fingerprint in seen or used + cost > max_chars:
                continue
            seen.add(fingerprint)
            used += cost
            chosen.append((position, rank, sentence, turn.turn_id))
    chosen.sort()
    evidence = tuple(dict.fromkeys(turn_id for _, _, _, turn_id in chosen))
    return Summary(" ".join(sentence for _, _, sentence, _ in chosen), evidence)


def _ranked_terms(texts: Sequence[str]) -> list[str]:
    counts: dict[str, int] = {}
    labels: dict[str, str] = {}
    for text in texts:
        for label in entities(text, limit=32):
            key = label.lower()
            counts[key] = counts.get(key, 0) + 1
            labels.setdefault(key, label)
    # Ties keep first-seen order (dicts preserve insertion), then the lexicographic label.
    order = {key: index for index, key in enumerate(labels)}
    return [labels[k] for k in sorted(counts, key=lambda k: (-counts[k], order[k], k))]


def _topic_words(texts: Sequence[str]) -> list[str]:
    counts: dict[str, int] = {}
    for text in texts:
        for word in words(text):
            lowered = word.lower()
            if len(lowered) >= 4 and lowered not in STOPWORDS and not lowered.isdigit():
                counts[lowered] = counts.get(lowered, 0) + 1
    order = {key: index for index, key in enumerate(counts)}
    return [k for k in sorted(counts, key=lambda k: (-counts[k], order[k], k))]


def title_of(user_texts: Sequence[str], key_entities: Sequence[str]) -> str:
    """A short topic label: the top entities, else the most frequent topic words."""
    terms = list(key_entities[:3]) or [w.capitalize() for w in _topic_words(user_texts)[:3]]
    return clip(", ".join(terms), TITLE_MAX_CHARS) if terms else "Conversation"


def unresolved_questions(turns: Sequence[Turn]) -> list[str]:
    """User questions no assistant turn followed, and a last assistant question the user left open."""
    ordered = sorted(turns, key=lambda t: (t.time_us, t.turn_id))
    found: list[str] = []
    for index, turn in enumerate(ordered):
        answered = any(later.role != turn.role for later in ordered[index + 1 :])
        if answered:
            continue
        questions = [s for s in sentences(turn.text) if s.endswith("?")]
        found.extend(clip(q, MAX_QUESTION_CHARS) for q in questions)
    return list(dict.fromkeys(found))[-MAX_UNRESOLVED:]


def build_digest(
    thread_id: str, turns: Sequence[Turn], thread_loops: Sequence[Loop], update_us: int | None = None
) -> Digest:
    """The digest of a session: summary fields and evidence turn ids, never a transcript.
    `update_us` is the session's last turn time when the turns given leave some out."""
    ordered = sorted(turns, key=lambda t: (t.time_us, t.turn_id))
    user_texts = [t.text for t in ordered if t.role == Role.USER]
    key_entities = tuple(_ranked_terms(user_texts)[:MAX_KEY_ENTITIES])
    summary = summarise(ordered)
    open_loops = loop_order([loop for loop in thread_loops if loop.is_open])
    times = {t.turn_id: t.time_us for t in ordered}
    cited = set(summary.evidence_turn_ids) | {loop.source_turn_id for loop in open_loops if loop.source_turn_id in times}
    evidence = sorted(cited, key=lambda turn_id: (times[turn_id], turn_id))[-MAX_EVIDENCE:]
    return Digest(
        thread_id=thread_id,
        title=title_of(user_texts, key_entities),
        summary=summary.text,
        key_entities=key_entities,
        unresolved_questions=tuple(unresolved_questions(ordered)),
        next_step=open_loops[0].text if open_loops else "",
        evidence_turn_ids=tuple(evidence),
        update_us=update_us if update_us is not None else (ordered[-1].time_us if ordered else 0),
        has_open_loops=bool(open_loops),
    )
