"""Resume candidates and tiers (seed 001 §2.21, §2.21A)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from memmesh.engines.thread_store.domain.model import Digest, Tier
from memmesh.engines.thread_store.domain.text import clip, content_stems
from memmesh.text import sentences


class Resumable(Protocol):
    """What ordering reads of a digest (a Digest or its DigestHead)."""

    @property
    def thread_id(self) -> str: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def use_count(self) -> int: ...
    @property
    def last_use_us(self) -> int: ...
    @property
    def unresolved(self) -> bool: ...
    @property
    def last_used_us(self) -> int: ...


D = TypeVar("D", bound=Resumable)

HOUR_US = 3_600 * 1_000_000
DAY_US = 24 * HOUR_US
HOT_WINDOW_US = 72 * HOUR_US
WARM_WINDOW_US = 30 * DAY_US
# Unresolved threads keep their priority for 90 days, then decay to ordinary recency.
UNRESOLVED_WINDOW_US = 90 * DAY_US
MAX_CANDIDATES = 5
# "Where we left off" (seed 001 §2.21): 1-3 short bullets for the top candidate.
MAX_LEFT_OFF = 3
LEFT_OFF_CHARS = 160


def counts_as_unresolved(digest: Resumable, now_us: int) -> bool:
    """Unresolved and within its 90-day eligibility window."""
    return digest.unresolved and now_us - digest.last_used_us <= UNRESOLVED_WINDOW_US


def _resume_key(now_us: int) -> Callable[[Resumable], tuple[bool, bool, int, int, str]]:
    def key(d: Resumable) -> tuple[bool, bool, int, int, str]:
        return (
            not d.pinned,
            not counts_as_unresolved(d, now_us),
            -d.last_used_us,
            -d.use_count,
            d.thread_id,
        )

    return key


def resume_order(digests: Sequence[D], now_us: int) -> list[D]:
    """Pinned > unresolved > most recent last use > highest use count > lexicographic id."""
    return sorted(digests, key=_resume_key(now_us))


def tier_of(digest: Resumable, now_us: int) -> Tier:
    """HOT within 72 h of its last use, WARM within 30 days, else COLD."""
    age = now_us - digest.last_used_us
    if age <= HOT_WINDOW_US:
        return Tier.HOT
    if age <= WARM_WINDOW_US:
        return Tier.WARM
    return Tier.COLD


def resume_candidates(
    digests: Sequence[D], opening_session_id: str, now_us: int, limit: int = MAX_CANDIDATES
) -> tuple[list[D], str]:
    """Candidate threads in resume order (the opening session excluded) and the top one's tier."""
    # nsmallest equals sorted(...)[:limit] without ordering every digest of the user.
    others = (d for d in digests if d.thread_id != opening_session_id)
    ranked = heapq.nsmallest(limit, others, key=_resume_key(now_us))
    return ranked, (tier_of(ranked[0], now_us).value if ranked else "")


def left_off(digest: Digest) -> tuple[str, ...]:
    """ "Where we left off" for a thread, at most 3 bullets from its structured fields: the
    next step, then its unresolved questions, then its newest decision, then the newest
    sentences of its summary that say something the bullets before do not, each bounded,
    none repeated; empty for an empty digest. A model's own bullets, when it reflected the
    thread, come instead."""
    if digest.left_off:
        return digest.left_off[:MAX_LEFT_OFF]
    bullets = [f"Next step: {digest.next_step}"] if digest.next_step else []
    bullets += [f"Still open: {question}" for question in digest.unresolved_questions]
    bullets += [f"Decided: {decision}" for decision in digest.last_decisions[:1]]
    said = set(content_stems(" ".join(bullets)))
    for sentence in reversed(sentences(digest.said_summary or digest.summary)):
        stems = set(content_stems(sentence))
        if len(stems - said) > len(stems) // 3:
            bullets.append(sentence)
            said |= stems
    kept = dict.fromkeys(clip(" ".join(b.split()), LEFT_OFF_CHARS) for b in bullets if b.strip())
    return tuple(kept)[:MAX_LEFT_OFF]


def _about(digest: Digest) -> frozenset[str]:
    """The word stems a thread is about: its title, key entities, summary, open questions
    and next step."""
    fields = (digest.title, *digest.key_entities, digest.summary, *digest.unresolved_questions)
    return frozenset(content_stems(" ".join((*fields, digest.next_step))))


def thread_about(
    digests: Sequence[Digest], topic: str, exclude_thread_id: str, now_us: int
) -> Digest | None:
    """The thread "resume the thread about <topic>" names: the one sharing the most of the
    topic's content words (title and key entities counting twice), ties in resume order;
    None when no thread shares any (or the topic has no content word)."""
    wanted = frozenset(content_stems(topic))
    if not wanted:
        return None
    best: tuple[int, Digest] | None = None
    for digest in resume_order([d for d in digests if d.thread_id != exclude_thread_id], now_us):
        named = frozenset(content_stems(" ".join((digest.title, *digest.key_entities))))
        score = len(wanted & _about(digest)) + len(wanted & named)
        if score and (best is None or score > best[0]):
            best = (score, digest)
    return best[1] if best else None
