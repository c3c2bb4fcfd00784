"""Deterministic text helpers: sentences, content words with stems, entities."""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,:]\d+)*")
_CAPITALISED = re.compile(r"[A-Z][a-zA-Z'’-]*")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further get got had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd
    i'll i'm i've if in into is isn't it it's its itself just let's like me more most mustn't my
    myself need no nor not now of off oh ok okay on once only or other ought our ours ourselves out
    over own really same shan't she she'd she'll she's should shouldn't so some such than thanks
    that that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up us very was wasn't we we'd we'll we're
    we've well were weren't what what's when when's where where's which while who who's whom why
    why's will with won't would wouldn't yeah yes you you'd you'll you're you've your yours
    yourself yourselves hi hello hey sure maybe please thank going want wanna gonna lot lots thing
    things something anything really pretty quite still even much many one two""".split()
)

# Capitalised words that start sentences without naming anything.
_NOT_ENTITIES = frozenset(
    """i i'm i've i'll i'd im ive ill the a an my our your his her their its we you he she it they
    this that these those what when where why how who which yes no yeah hi hello hey thanks thank
    ok okay so and but or also just maybe well oh sure please great good nice cool wow sorry let
    let's there here then now today tomorrow yesterday tonight anyway actually honestly really
    remind done did have has had do does can could would should will shall may might must is are
    was were be been if as at in on for from with by to of not never always again still""".split()
)

_STEMMER = snowballstemmer.stemmer("english")


def sentences(text: str) -> list[str]:
    """Sentences of a text, trimmed, empty ones dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def words(text: str) -> list[str]:
    """Word tokens in order (apostrophes kept inside words)."""
    return [w.replace("’", "'") for w in _WORD.findall(text)]


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """The Snowball stem of a lowercased word."""
    return str(_STEMMER.stemWord(word.lower()))


def content_stems(text: str) -> tuple[str, ...]:
    """Stems of the content words (no stopwords, at least 3 letters), in first-seen order."""
    seen: dict[str, None] = {}
    for word in words(text):
        lowered = word.lower()
        if len(lowered) < 3 or lowered in STOPWORDS:
            continue
        seen.setdefault(stem(lowered), None)
    return tuple(seen)


def entities(text: str, limit: int = 8) -> list[str]:
    """Capitalised names and terms (consecutive capitalised words join), first-seen order.

    A sentence's first word counts only when it is not a common opener, so "Sarah called"
    yields Sarah and "Booked it" yields nothing.
    """
    found: dict[str, str] = {}
    for sentence in sentences(text):
        tokens = words(sentence)
        run: list[str] = []
        for index, token in enumerate([*tokens, ""]):
            is_name = bool(_CAPITALISED.fullmatch(token)) and token.lower() not in _NOT_ENTITIES
            if is_name and index == 0 and (token.lower() in STOPWORDS or token.endswith(("ing", "ed", "ly"))):
                is_name = False
            if is_name:
                run.append(token.rstrip("'’"))
                continue
            if run:
                label = " ".join(run)
                found.setdefault(entity_node_id(label), label)
                run = []
    return list(found.values())[:limit]


def entity_node_id(label: str) -> str:
    """Graph node id of an entity label ("New York" -> "entity:new-york")."""
    return "entity:" + "-".join(label.lower().split())


def clip(text: str, limit: int) -> str:
    """Text cut to at most limit characters at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"
