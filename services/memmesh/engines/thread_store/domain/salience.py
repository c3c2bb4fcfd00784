"""What a summary of turns says: the salient sentences of each turn, the entities and
topic words named most, and a budget of sentences filled without saying a thing twice.
Shared by the rolling summary, the thread digest and the episode digests."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from memmesh.engines.thread_store.domain.text import clip, content_stems, entities
from memmesh.text import CONVERSATION_STOP_WORDS, sentences, words

SENTENCES_PER_TURN = 2
MAX_SENTENCE_CHARS = 200
_NUMBER = re.compile(r"\d")

# (position of the turn, rank of the sentence in it, sentence, turn id)
Quote = tuple[int, int, str, str]


# A sentence in the first person tells of the speaker's own life, one in the second person
# only of the listener's ("That's great news, you'll do so well!"): a digest of someone's
# turns is about them. The weight moves a sentence by two content words either way.
_FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine we we're we've our ours us".split())
_SECOND_PERSON = frozenset("you you're you've you'd you'll your yours".split())
PERSON_WEIGHT = 2


def salience(sentence: str) -> int:
    """Entities count double, a number once, every content stem once, and the person the
    sentence speaks in moves it up (first) or down (second only)."""
    said = {w.lower() for w in words(sentence)}
    person = (
        PERSON_WEIGHT if said & _FIRST_PERSON else -PERSON_WEIGHT if said & _SECOND_PERSON else 0
    )
    return (
        2 * len(entities(sentence))
        + int(bool(_NUMBER.search(sentence)))
        + len(content_stems(sentence))
        + person
    )


@lru_cache(maxsize=4096)
def salient_sentences(text: str) -> tuple[str, ...]:
    """At most two sentences of a turn that carry content, in their spoken order (cached: a
    rolling summary re-reads the same recent turns on every append)."""
    candidates = [
        (index, s) for index, s in enumerate(sentences(text)) if len(content_stems(s)) >= 2
    ]
    best = sorted(candidates, key=lambda item: (-salience(item[1]), item[0]))[:SENTENCES_PER_TURN]
    return tuple(clip(s, MAX_SENTENCE_CHARS) for _, s in sorted(best))


def fill_budget(offered: Iterable[Quote], max_chars: int) -> tuple[str, tuple[str, ...]]:
    """Take quotes in the order offered while they fit and say something new; the text
    told in (turn, sentence) order and the ids of exactly the turns it quotes."""
    chosen: list[Quote] = []
    seen: set[tuple[str, ...]] = set()
    used = 0
    for quote in offered:
        fingerprint = content_stems(quote[2])
        cost = len(quote[2]) + (1 if chosen else 0)
        if fingerprint in seen or used + cost > max_chars:
            continue
        seen.add(fingerprint)
        used += cost
        chosen.append(quote)
    chosen.sort()
    evidence = tuple(dict.fromkeys(turn_id for _, _, _, turn_id in chosen))
    return " ".join(sentence for _, _, sentence, _ in chosen), evidence


def ranked_entities(texts: Sequence[str]) -> list[str]:
    """Entities by how often the texts name them; ties keep first-seen order."""
    counts: dict[str, int] = {}
    labels: dict[str, str] = {}
    for text in texts:
        for label in entities(text, limit=32):
            key = label.lower()
            counts[key] = counts.get(key, 0) + 1
            labels.setdefault(key, label)
    order = {key: index for index, key in enumerate(labels)}
    return [labels[k] for k in sorted(counts, key=lambda k: (-counts[k], order[k]))]


def topic_words(texts: Sequence[str]) -> list[str]:
    """Words of four letters or more that are no stop word, by how often the texts use
    them; ties keep first-seen order."""
    counts: dict[str, int] = {}
    for text in texts:
        for word in words(text):
            lowered = word.lower()
            if (
                len(lowered) >= 4
                and lowered not in CONVERSATION_STOP_WORDS
                and not lowered.isdigit()
            ):
                counts[lowered] = counts.get(lowered, 0) + 1
    order = {key: index for index, key in enumerate(counts)}
    return sorted(counts, key=lambda k: (-counts[k], order[k]))


def title_of(texts: Sequence[str], key_entities: Sequence[str], max_chars: int) -> str:
    """A short topic label: the top entities, else the most frequent topic words."""
    terms = list(key_entities[:3]) or [w.capitalize() for w in topic_words(texts)[:3]]
    return clip(", ".join(terms), max_chars) if terms else "Conversation"
