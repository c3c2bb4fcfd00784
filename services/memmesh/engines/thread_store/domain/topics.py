"""Topic threads (seed 001 §2.18): a thread is a topic, not a session.

Each closed session's digest joins one topic thread: the thread whose key entities and
topic words it shares most, or a new thread founded by it (the thread's id is the
founding session's id, so a thread of one session reads as that session always did).
A thread's digest is never stored: it is merged from its sessions' digests on read, so
whatever rebuilds or forgets a session's digest (a redaction, a restriction, a forget)
changes its thread with it. The thread itself keeps only its pin and its uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memmesh.engines.thread_store.domain.model import (
    DEFAULT_BOUNDS,
    Digest,
    DigestBounds,
    DigestHead,
)
from memmesh.engines.thread_store.domain.resume import UNRESOLVED_WINDOW_US
from memmesh.engines.thread_store.domain.salience import fill_budget, topic_words
from memmesh.engines.thread_store.domain.text import clip, content_stems
from memmesh.text import sentences, stem, words

TITLE_MAX_CHARS = 60
# A session is matched against at most this many of the user's most recent threads.
MATCH_THREADS = 8
# ... each compared as its newest few sessions say it.
MATCH_SESSIONS = 3
# A thread's digest is made from its newest sessions (its fields are newest first and
# bounded; older sessions stay in the archive and the index).
MERGE_SESSIONS = 12
# A session joins a thread when they share this much: each topic stem one point, each
# key entity half a point more (names recur across topics: a sister, a colleague), and the
# shared stems are at least this share of the smaller side.
JOIN_SCORE = 3.0
ENTITY_POINTS = 0.5
JOIN_OVERLAP = 0.12
# Words of talk about anything: sharing them says nothing about sharing a topic.
TOPIC_NEUTRAL = frozenset(
    stem(word)
    for word in """remind reminder think thought say said tell told ask asked today tomorrow
    yesterday week weekend month year time day next last new old quick update great good nice
    look looked way one thing things really take make get got come came want need go going
    know let maybe lot little big sure right call plan planning talk talked start""".split()
)


# seed 001 §2.18/§2.21A: threads are kept for a long policy window (per tenant); an
# unresolved one at least 90 days; a pinned one until the user forgets it.
DEFAULT_RETENTION_DAYS = 365


def expired(heads: Sequence[DigestHead], now_us: int, retention_us: int) -> list[str]:
    """The threads past their retention at `now_us`: unpinned, last used longer ago than
    the window (for an unresolved thread, at least 90 days)."""
    return [
        head.thread_id
        for head in heads
        if not head.pinned
        and now_us - head.last_used_us
        > (max(retention_us, UNRESOLVED_WINDOW_US) if head.unresolved else retention_us)
    ]


@dataclass(frozen=True)
class TopicRow:
    """What a thread keeps of its own: its pin and its uses."""

    topic_id: str
    pinned: bool = False
    use_count: int = 0
    last_use_us: int = 0


def merge(
    topic: TopicRow, members: Sequence[Digest], bounds: DigestBounds = DEFAULT_BOUNDS
) -> Digest:
    """The thread's digest from its sessions' digests (see `_merge`)."""
    newest_first = sorted(members, key=lambda d: (-d.update_us, d.thread_id))
    return _merge(topic, tuple(newest_first[:MERGE_SESSIONS]), bounds)


# Resume merges the same threads on every session start; the key is the whole content, so a
# cached digest is never a stale one.
@lru_cache(maxsize=1024)
def _merge(topic: TopicRow, newest_first: tuple[Digest, ...], bounds: DigestBounds) -> Digest:
    """The thread's digest from its newest MERGE_SESSIONS sessions' digests, newest first:
    the newest session's next step, open questions and decisions first, entities by how
    many sessions name them, a summary told newest session first within the budget,
    evidence the newest turn ids; `session_ids` names the sessions it was made from."""
    members = newest_first
    session_ids = tuple(sorted(d.thread_id for d in members))
    if len(members) == 1:
        return dataclasses.replace(
            members[0],
            thread_id=topic.topic_id,
            pinned=topic.pinned,
            use_count=topic.use_count,
            last_use_us=topic.last_use_us,
            session_ids=session_ids,
        )
    entity_counts: dict[str, int] = {}
    labels: dict[str, str] = {}
    for digest in newest_first:
        for label in digest.key_entities:
            key = label.lower()
            entity_counts[key] = entity_counts.get(key, 0) + 1
            labels.setdefault(key, label)
    order = {key: index for index, key in enumerate(labels)}
    key_entities = tuple(
        labels[k] for k in sorted(entity_counts, key=lambda k: (-entity_counts[k], order[k]))
    )[: bounds.key_entities]
    summary, _ = fill_budget(
        (
            (position, rank, sentence, digest.thread_id)
            for position, digest in enumerate(newest_first)
            for rank, sentence in enumerate(sentences(digest.summary))
        ),
        bounds.summary_chars,
    )
    # fill_budget tells sentences in (position, rank) order: newest session first.
    evidence = [turn for d in reversed(newest_first) for turn in d.evidence_turn_ids]
    return Digest(
        thread_id=topic.topic_id,
        title=_title(newest_first),
        summary=summary,
        key_entities=key_entities,
        unresolved_questions=_first(d.unresolved_questions for d in newest_first)[
            : bounds.unresolved
        ],
        next_step=next((d.next_step for d in newest_first if d.next_step), ""),
        evidence_turn_ids=tuple(dict.fromkeys(evidence))[-bounds.evidence :],
        update_us=max((d.update_us for d in members), default=0),
        pinned=topic.pinned,
        use_count=topic.use_count,
        last_use_us=topic.last_use_us,
        has_open_loops=any(d.has_open_loops for d in members),
        last_decisions=_first(d.last_decisions for d in newest_first)[: bounds.decisions],
        session_ids=session_ids,
    )


def _first(lists: Iterable[Sequence[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for items in lists for item in items))


def _title(newest_first: Sequence[Digest]) -> str:
    """The words most of the thread's sessions share (each session counted once per word),
    its sessions' key entities among them: what the sessions have in common is the topic."""
    per_session = [
        " ".join(
            dict.fromkeys(
                words(" ".join((d.title, *d.key_entities, d.summary, *d.last_decisions)).lower())
            )
        )
        for d in newest_first
    ]
    terms = [word.capitalize() for word in topic_words(per_session)[:3]]
    return clip(", ".join(terms), TITLE_MAX_CHARS) if terms else newest_first[0].title


def merge_heads(
    heads: Sequence[DigestHead], members: Mapping[str, str], topics: Mapping[str, TopicRow]
) -> list[DigestHead]:
    """The ordering fields of each thread from its sessions' (a session in no thread yet is
    a thread of its own): the newest update, unresolved when any session is, the thread's
    pin and uses."""
    grouped: dict[str, list[DigestHead]] = {}
    for head in heads:
        grouped.setdefault(members.get(head.thread_id, head.thread_id), []).append(head)
    merged: list[DigestHead] = []
    for topic_id, group in grouped.items():
        row = topics.get(topic_id)
        if row is None and len(group) == 1:
            merged.append(group[0])
            continue
        row = row or TopicRow(topic_id)
        merged.append(
            DigestHead(
                topic_id,
                max(h.update_us for h in group),
                row.pinned,
                row.use_count,
                row.last_use_us,
                any(h.unresolved for h in group),
            )
        )
    return sorted(merged, key=lambda h: (h.update_us, h.thread_id))


@lru_cache(maxsize=4096)
def topic_stems(digest: Digest) -> frozenset[str]:
    """The words a digest is about: its title, key entities, summary, decisions, open
    questions and next step."""
    fields = (
        digest.title,
        *digest.key_entities,
        digest.summary,
        *digest.last_decisions,
        *digest.unresolved_questions,
        digest.next_step,
    )
    return frozenset(content_stems(" ".join(fields)))


def _entity_keys(digest: Digest) -> frozenset[str]:
    return frozenset(label.lower() for label in digest.key_entities)


def joined_topic(session: Digest, threads: Sequence[Digest]) -> str | None:
    """The thread a session's digest joins: the one it shares most with (topic stems, key
    entities) when that is enough, ties to the most recent thread, then the lexicographic
    id; None when no thread is close enough (the session founds one)."""
    own = topic_stems(session) - TOPIC_NEUTRAL
    own_entities = _entity_keys(session)
    if not own:
        return None
    best: tuple[float, int, str] | None = None
    for thread in threads:
        if thread.thread_id == session.thread_id:
            continue
        theirs = topic_stems(thread) - TOPIC_NEUTRAL
        shared = len(own & theirs)
        score = shared + ENTITY_POINTS * len(own_entities & _entity_keys(thread))
        if score < JOIN_SCORE or shared / max(min(len(own), len(theirs)), 1) < JOIN_OVERLAP:
            continue
        if best is None or (score, thread.update_us) > best[:2]:
            best = (score, thread.update_us, thread.thread_id)
    return best[2] if best else None


def newest_sessions(
    heads: Sequence[DigestHead], members: Mapping[str, str], topics: Iterable[str], limit: int
) -> list[str]:
    """The ids of the newest `limit` sessions of each of these threads (a session in no
    thread yet counts as a thread of its own), by the sessions' digest heads."""
    wanted = set(topics)
    taken: dict[str, int] = {}
    chosen: list[str] = []
    for head in sorted(heads, key=lambda h: (-h.update_us, h.thread_id)):
        topic = members.get(head.thread_id, head.thread_id)
        if topic in wanted and taken.get(topic, 0) < limit:
            taken[topic] = taken.get(topic, 0) + 1
            chosen.append(head.thread_id)
    return chosen


def recent_threads(threads: Sequence[Digest], limit: int = MATCH_THREADS) -> list[Digest]:
    """The most recently updated threads, newest first, ties by id."""
    return sorted(threads, key=lambda d: (-d.update_us, d.thread_id))[:limit]


def topic_of(thread_id: str, members: Mapping[str, str], topics: Mapping[str, TopicRow]) -> str:
    """The thread an id names: a thread's own id, else the thread of the session it names
    (a session in no thread yet is a thread of its own)."""
    return thread_id if thread_id in topics else members.get(thread_id, thread_id)


def threads_of(
    digests: Iterable[Digest],
    members: Mapping[str, str],
    topics: Mapping[str, TopicRow],
    bounds: DigestBounds = DEFAULT_BOUNDS,
) -> dict[str, Digest]:
    """Each thread's digest merged from the given session digests, by thread id."""
    grouped: dict[str, list[Digest]] = {}
    for digest in digests:
        grouped.setdefault(members.get(digest.thread_id, digest.thread_id), []).append(digest)
    return {
        topic_id: merge(topics.get(topic_id) or TopicRow(topic_id), group, bounds)
        for topic_id, group in grouped.items()
    }


def head_of(digest: Digest) -> DigestHead:
    """The ordering fields of a digest."""
    return DigestHead(
        digest.thread_id,
        digest.update_us,
        digest.pinned,
        digest.use_count,
        digest.last_use_us,
        digest.unresolved,
    )


def forget_cached_digests() -> None:
    """Empty the merge and topic-word caches. Keyed by content, they never serve what an
    erasure changed, but they hold its words in memory until evicted: an erasure lets go of
    them at once."""
    _merge.cache_clear()
    topic_stems.cache_clear()
