"""Bounded text: cuts on word boundaries and the query's intent words."""

from __future__ import annotations

import re

from memmesh.text import entity_node_id

_WORD = re.compile(r"[a-z']+")
_NAME_WORD = re.compile(r"[a-z][a-z'-]*")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
# Words shorter than this are never looked up as graph entities.
_MIN_ENTITY_CHARS = 3

# The user asks for memory explicitly: pull-only items may pass, resume may surface.
_RECALL_PHRASES = (
    "remember",
    "remind me",
    "recall",
    "what did i",
    "what did we",
    "what do you know",
    "where were we",
    "left off",
    "last time",
    "what is my",
    "what's my",
    "who is my",
    "who's my",
    "tell me about my",
    "did i tell you",
    "did i mention",
    "resume",
)
_CONTINUITY_PHRASES = (
    "where were we",
    "left off",
    "last time",
    "resume",
    "what did we",
    "pick up",
    "continue",
)


def cut_words(text: str, limit: int) -> str:
    """At most `limit` characters, cut on a word boundary, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if " " in head and not text[limit - 1].isspace():
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:") + "…"


def mentions(text: str, label: str) -> bool:
    """Whether the text holds the label as whole words ("Mel" is not in "Melanie")."""
    # The substring test first: most labels are not in the text at all, and it is far
    # cheaper than building the pattern.
    return (
        bool(label)
        and label in text
        and re.search(rf"(?<!\w){re.escape(label)}(?!\w)", text) is not None
    )


def sentences_of(text: str) -> list[str]:
    """The text's sentences in order, each with its closing punctuation (split after . ! ?)."""
    return [part for part in _SENTENCE_END.split(text) if part]


def words(text: str) -> list[str]:
    """Lower-case words of a text, in order."""
    return _WORD.findall(text.lower())


def _normal(query: str) -> str:
    return " ".join(words(query.replace("’", "'")))


def asks_for_recall(query: str) -> bool:
    """The user asks what is remembered (lets pull-only memory pass)."""
    normal = _normal(query)
    return any(phrase in normal for phrase in _RECALL_PHRASES)


def asks_for_continuity(query: str) -> bool:
    """The user asks to pick up where things were left (lets the episode bridge surface)."""
    normal = _normal(query)
    return any(phrase in normal for phrase in _CONTINUITY_PHRASES)


def entity_node_ids(query: str, limit: int) -> tuple[str, ...]:
    """Graph node ids the query may name: its words, then its word pairs ("new york" ->
    "entity:new-york"), formed as the ThreadStore forms them from labels; at most `limit`."""
    tokens = _NAME_WORD.findall(query.replace("’", "'").lower())
    names = [t for t in tokens if len(t) >= _MIN_ENTITY_CHARS]
    names += [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]
    ids = (entity_node_id(name) for name in names)
    return tuple(dict.fromkeys(ids))[:limit]
