"""One mapping between a Context Bundle's parts and the items offered to the ExposureGuard.

The composer offers every candidate before it fills the caps; the gateway's final gate
offers the composed bundle again. Both build their items here and read the verdict back
here, so an item id always says where its item sits: the i-th element of a listed part
is "<prefix><i>" ("a3" is the fourth atom), a single part has a fixed id ("n" is the
user's name). The rolling summary and the episode bridge are offered sentence by sentence
("s0", "s1", ..., "b0", ...), so a rule on one sentence removes that sentence and the rest
is rebuilt from what passed, never dropped whole. The text offered is the text the bundle
carries.

Pure: no protobuf, no I/O. Exposures are the proto value names without their prefix
("SAFE_TO_SPEAK"); "UNSPECIFIED" never passes the guard.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple, TypeVar

from memmesh.text import sentences

T = TypeVar("T")

ATOM = "a"
EXCERPT = "e"
WORKING_TURN = "w"
DIGEST = "d"
LOOP = "l"
ENTITY = "g"
CORRECTION = "c"
SUMMARY = "s"
BRIDGE = "b"
NAME = "n"
QUESTION = "q"
# The hint bundle at the final gate: vocabulary terms and correction pairs.
VOCABULARY = "v"
HINT_CORRECTION = "h"
# Digests, loops, summaries, bridges and graph entities are built by the ThreadStore from
# SAFE_TO_SPEAK turns only; the user's name is always speakable to the user.
DERIVED_EXPOSURE = "SAFE_TO_SPEAK"
NAME_KEY = "identity.name"


class GuardItem(NamedTuple):
    """One item offered to the ExposureGuard; item ids are unique within a request. (A named
    tuple: tens of them are built per gate pass, several times cheaper than a frozen
    dataclass.)"""

    item_id: str
    text: str
    exposure: str = DERIVED_EXPOSURE
    key: str = ""
    topics: tuple[str, ...] = ()
    thread_id: str = ""
    pull_only: bool = False
    atom_id: str = ""


def kept(prefix: str, values: Sequence[T], allowed: Collection[str]) -> list[T]:
    """The elements of a listed part whose items the guard let pass, in order."""
    return [value for index, value in enumerate(values) if f"{prefix}{index}" in allowed]


def withheld_texts(items: Iterable[GuardItem], allowed: Collection[str]) -> tuple[str, ...]:
    """The texts of the items the guard held back."""
    return tuple(item.text for item in items if item.item_id not in allowed)


def atom_item(
    index: int,
    atom_id: str,
    key: str,
    text: str,
    exposure: str,
    topics: Sequence[str] = (),
    pull_only: bool = False,
) -> GuardItem:
    """The index-th atom, under its own key, topics and exposure."""
    return GuardItem(f"{ATOM}{index}", text, exposure, key, tuple(topics), "", pull_only, atom_id)


def turn_item(prefix: str, index: int, text: str, exposure: str, session_id: str) -> GuardItem:
    """An excerpt (EXCERPT) or working-memory turn (WORKING_TURN): the archive's exposure,
    and its session as the thread a rule may name."""
    return GuardItem(f"{prefix}{index}", text, exposure or "UNSPECIFIED", thread_id=session_id)


def digest_text(title: str, summary: str) -> str:
    """What a digest says: its title and summary."""
    return f"{title} {summary}".strip()


def digest_item(index: int, title: str, summary: str, thread_id: str) -> GuardItem:
    """The index-th digest, under the thread it belongs to."""
    return GuardItem(f"{DIGEST}{index}", digest_text(title, summary), thread_id=thread_id)


def loop_item(index: int, text: str) -> GuardItem:
    """The index-th open loop."""
    return GuardItem(f"{LOOP}{index}", text)


def entity_item(index: int, related_label: str, label: str) -> GuardItem:
    """The index-th graph entity, offered with the one it was reached from: a rule on
    either holds it back."""
    return GuardItem(f"{ENTITY}{index}", f"{related_label} {label}")


def correction_item(index: int, heard: str, meant: str) -> GuardItem:
    """The index-th correction pair of the hint bundle."""
    return GuardItem(f"{CORRECTION}{index}", f"{heard} {meant}")


def summary_items(text: str, session_id: str) -> list[GuardItem]:
    """The session's rolling summary, one item per sentence, under the session's thread."""
    return [
        GuardItem(f"{SUMMARY}{i}", sentence, thread_id=session_id)
        for i, sentence in enumerate(sentences(text))
    ]


def bridge_items(text: str) -> list[GuardItem]:
    """The episode bridge of a session start, one item per sentence."""
    return [GuardItem(f"{BRIDGE}{i}", sentence) for i, sentence in enumerate(sentences(text))]


def kept_sentences(prefix: str, text: str, allowed: Collection[str]) -> str:
    """The text rebuilt from the sentences the guard let pass (SUMMARY or BRIDGE items):
    the text as it is when every sentence passed, '' when none did."""
    parts = sentences(text)
    passed = kept(prefix, parts, allowed)
    if len(passed) == len(parts):
        return text
    return " ".join(passed)


def name_item(display_name: str) -> GuardItem:
    """The user's name in push memory."""
    return GuardItem(NAME, display_name, key=NAME_KEY)


def question_item(key: str, text: str, atom_id: str, exposure: str) -> GuardItem:
    """The clarification question, under its atom's key and exposure."""
    return GuardItem(QUESTION, text, exposure, key, atom_id=atom_id)


def vocabulary_items(terms: Sequence[str]) -> list[GuardItem]:
    """The hint bundle's vocabulary, one item per term."""
    return [GuardItem(f"{VOCABULARY}{i}", term) for i, term in enumerate(terms)]


def hint_correction_items(pairs: Sequence[tuple[str, str]]) -> list[GuardItem]:
    """The hint bundle's heard -> meant pairs, one item per pair."""
    return [
        GuardItem(f"{HINT_CORRECTION}{i}", f"{heard} {meant}")
        for i, (heard, meant) in enumerate(pairs)
    ]
