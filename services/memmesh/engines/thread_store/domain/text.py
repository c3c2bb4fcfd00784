"""The ThreadStore's text rules: content stems of a turn, named entities, clipped text
(tokens, stems and stop words come from memmesh.text)."""

from __future__ import annotations

import re

from memmesh.text import (
    CONVERSATION_STOP_WORDS,
    addressed_names,
    entity_node_id,
    sentences,
    stem,
    words,
)

_CAPITALISED = re.compile(r"[A-Z][a-zA-Z'’-]*")

# Capitalised words that start sentences without naming anything.
_NOT_ENTITIES = frozenset(
    """i i'm i've i'll i'd im ive ill the a an my our your his her their its we you he she it they
    this that these those what when where why how who which yes no yeah hi hello hey thanks thank
    ok okay so and but or also just maybe well oh sure please great good nice cool wow sorry let
    let's there here then now today tomorrow yesterday tonight anyway actually honestly really
    remind done did have has had do does can could would should will shall may might must is are
    was were be been if as at in on for from with by to of not never always again still""".split()
)


def content_stems(text: str) -> tuple[str, ...]:
    """Stems of the content words (no stopwords, at least 3 letters), in first-seen order."""
    seen: dict[str, None] = {}
    for word in words(text):
        lowered = word.lower()
        if len(lowered) < 3 or lowered in CONVERSATION_STOP_WORDS:
            continue
        seen.setdefault(stem(lowered), None)
    return tuple(seen)


def entities(text: str, limit: int = 8) -> list[str]:
    """Capitalised names and terms (consecutive capitalised words join), first-seen order.

    A sentence's first word counts only when it is not a common opener, so "Sarah called"
    yields Sarah and "Booked it" yields nothing. A name the sentence addresses someone by
    ("Thanks, Mel!") is who is talking, not what is talked about, and is no entity of it.
    """
    found: dict[str, str] = {}
    for sentence in sentences(text):
        addressed = set(addressed_names(sentence))
        tokens = ["" if t in addressed else t for t in words(sentence)]
        run: list[str] = []
        for index, token in enumerate([*tokens, ""]):
            is_name = bool(_CAPITALISED.fullmatch(token)) and token.lower() not in _NOT_ENTITIES
            opener = token.lower() in CONVERSATION_STOP_WORDS or token.endswith(("ing", "ed", "ly"))
            if is_name and index == 0 and opener:
                is_name = False
            if is_name:
                run.append(token.rstrip("'’"))
                continue
            if run:
                label = " ".join(run)
                found.setdefault(entity_node_id(label), label)
                run = []
    return list(found.values())[:limit]


def clip(text: str, limit: int) -> str:
    """Text cut to at most limit characters at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"
