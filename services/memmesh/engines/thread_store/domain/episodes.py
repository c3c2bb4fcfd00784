"""Episode digests: a closed session split into runs of consecutive turns, each summarised
by the salient sentences of its own turns (seed 001 §2.18 digests, §2.20 paging).

An episode's evidence is exactly the turns one of its summary sentences comes from, so a
digest never claims a turn it does not draw on. Extractive, bounded and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.thread_store.domain.model import Episode, Role, Turn
from memmesh.engines.thread_store.domain.salience import (
    fill_budget,
    ranked_entities,
    salience,
    salient_sentences,
    title_of,
)
from memmesh.engines.thread_store.domain.text import (
    clip,
    content_stems,
)

# A session is cut into episodes of at most this many turns (both speakers), and earlier
# when the talk moves on to words the episode has not used.
EPISODE_MAX_TURNS = 6
EPISODE_MIN_TURNS = 3
# A turn sharing fewer content stems than this with the episode so far starts a new one.
TOPIC_SHIFT_OVERLAP = 1
MAX_EPISODES = 64
EPISODE_SUMMARY_CHARS = 500
EPISODE_TITLE_CHARS = 60
EPISODE_ENTITIES = 5
# Ids must fit the 128 characters every index document id is allowed.
MAX_EPISODE_ID_CHARS = 128


def episode_id_of(thread_id: str, number: int) -> str:
    """The deterministic id of a thread's episode (numbered from 1)."""
    return f"{thread_id}#e{number}"


def has_episodes(thread_id: str) -> bool:
    """A thread gets episodes when their ids fit an index id."""
    return len(episode_id_of(thread_id, MAX_EPISODES)) <= MAX_EPISODE_ID_CHARS


def segment(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Consecutive turns in (time, id) order cut into episodes: a cut after EPISODE_MAX_TURNS,
    or at a turn that shares no content with an episode of at least EPISODE_MIN_TURNS."""
    ordered = sorted(turns, key=lambda t: (t.time_us, t.turn_id))
    episodes: list[list[Turn]] = []
    current: list[Turn] = []
    vocabulary: set[str] = set()
    for turn in ordered:
        stems = set(content_stems(turn.text))
        shifted = (
            len(current) >= EPISODE_MIN_TURNS
            and bool(stems)
            and len(stems & vocabulary) < TOPIC_SHIFT_OVERLAP
        )
        if current and (len(current) >= EPISODE_MAX_TURNS or shifted):
            episodes.append(current)
            current, vocabulary = [], set()
        current.append(turn)
        vocabulary |= stems
    if current:
        episodes.append(current)
    return episodes


def _key_entities(texts: Sequence[str]) -> tuple[str, ...]:
    return tuple(
        clip(label, EPISODE_TITLE_CHARS) for label in ranked_entities(texts)[:EPISODE_ENTITIES]
    )


def summarise_episode(turns: Sequence[Turn]) -> tuple[str, tuple[str, ...]]:
    """The episode's summary and the ids of exactly the turns it quotes.

    Sentences are chosen by salience (the user's before the assistant's at equal salience)
    until the budget is full, then told in spoken order.
    """
    offered = sorted(
        (-salience(sentence) - int(turn.role == Role.USER), position, rank, sentence, turn.turn_id)
        for position, turn in enumerate(turns)
        for rank, sentence in enumerate(salient_sentences(turn.text))
    )
    return fill_budget((quote[1:] for quote in offered), EPISODE_SUMMARY_CHARS)


def build_episodes(thread_id: str, turns: Sequence[Turn]) -> tuple[Episode, ...]:
    """The episodes of a thread; an episode none of whose turns carries content is left out,
    and so is every episode of a thread whose id is too long to name them."""
    if not has_episodes(thread_id):
        return ()
    built: list[Episode] = []
    for run in segment(turns)[-MAX_EPISODES:]:
        summary, evidence = summarise_episode(run)
        if not evidence:
            continue
        quoted = [t.text for t in run if t.turn_id in evidence]
        key_entities = _key_entities(quoted)
        built.append(
            Episode(
                episode_id=episode_id_of(thread_id, len(built) + 1),
                thread_id=thread_id,
                title=title_of(quoted, key_entities, EPISODE_TITLE_CHARS),
                summary=summary,
                key_entities=key_entities,
                evidence_turn_ids=evidence,
                update_us=run[-1].time_us,
            )
        )
    return tuple(built)
