"""A user's rules compiled into sets, dicts and prefix tuples. Items are matched in batches:
the per-item work runs inside C-level map/compress calls and string searches, and Python code
runs only for the few items a rule may concern."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import accumulate, chain
from operator import attrgetter
from typing import Generic, NamedTuple, TypeVar

from memmesh.engines.exposure_guard.domain.rules import RuleId, TargetType
from memmesh.engines.exposure_guard.domain.words import (
    has_phrase,
    longest_stem,
    probe_of,
    stems,
    word_at,
)
from memmesh.text import fold, inflection_stem

# Texts (and topic lists) whose matches one compiled rule set remembers.
MEMO_ENTRIES = 4096
# Separators of the batch strings: between items (texts), between topics.
_ITEM_SEP, _TOPIC_SEP = "\x00", "\x01"
_TEXT, _TOPICS, _KEY = attrgetter("text"), attrgetter("topics"), attrgetter("key")


class Item(NamedTuple):
    """What rules look at: an item offered to the filter, a fact about to be stored, an atom.
    (A named tuple: one is built per item of every Filter call, several times cheaper than
    a frozen dataclass.)"""

    item_id: str
    key: str = ""
    topics: tuple[str, ...] = ()
    text: str = ""
    thread_id: str = ""
    work_order_id: str = ""
    atom_id: str = ""


@dataclass(frozen=True, slots=True)
class _Topic:
    rule: RuleId
    phrase: tuple[str, ...]
    longest: str


@dataclass
class RuleMatcher:
    """Rules of one or more kinds."""

    # Target -> the rules on it (one per kind: a target may carry several kinds of rule).
    keys: dict[str, list[RuleId]] = field(default_factory=dict)
    threads: dict[str, list[RuleId]] = field(default_factory=dict)
    work_orders: dict[str, list[RuleId]] = field(default_factory=dict)
    atoms: dict[str, list[RuleId]] = field(default_factory=dict)
    probes: dict[str, list[_Topic]] = field(default_factory=dict)
    # "key." of every key rule: a key at or below a rule's key, plus ".", starts with one.
    key_prefixes: tuple[str, ...] = ()
    # Topic matches of texts and topic lists seen before: the same atoms come back turn
    # after turn, and what they match depends on these rules only.
    _text_memo: _Memo[str] = field(default_factory=lambda: _Memo(), compare=False, repr=False)
    _topics_memo: _Memo[tuple[str, ...]] = field(
        default_factory=lambda: _Memo(), compare=False, repr=False
    )

    @classmethod
    def of(
        cls, rules: Iterable[RuleId], terms: Mapping[RuleId, Sequence[str]] | None = None
    ) -> RuleMatcher:
        """Compile rule ids (their order does not matter); a rule's terms, if given, match
        as its topic words do and count as hits of that rule."""
        matcher = cls()
        by_type = {
            TargetType.KEY: matcher.keys,
            TargetType.THREAD: matcher.threads,
            TargetType.WORK_ORDER: matcher.work_orders,
            TargetType.ATOM: matcher.atoms,
        }
        for rule in sorted(set(rules)):
            if rule.target_type is TargetType.TOPIC:
                phrase = stems(fold(rule.target))
                if phrase:
                    topic = _Topic(rule, phrase, longest_stem(phrase))
                    matcher.probes.setdefault(probe_of(phrase), []).append(topic)
            else:
                by_type[rule.target_type].setdefault(rule.target, []).append(rule)
            for term in (terms or {}).get(rule, ()):
                phrase = stems(fold(term))
                if phrase:
                    topic = _Topic(rule, phrase, longest_stem(phrase))
                    matcher.probes.setdefault(probe_of(phrase), []).append(topic)
        matcher.key_prefixes = tuple(f"{key}." for key in matcher.keys)
        return matcher

    @property
    def empty(self) -> bool:
        return not (self.keys or self.threads or self.work_orders or self.atoms or self.probes)

    def id_matches(self, item: Item) -> set[RuleId]:
        """Key (the item's key or one above it, by dotted segments), thread, work order and atom rules."""
        found: set[RuleId] = set()
        if self.keys and item.key:
            key = f"{item.key.casefold()}."
            for target, rules in self.keys.items():
                if key.startswith(f"{target}."):
                    found.update(rules)
        for value, by_target in (
            (item.thread_id, self.threads),
            (item.work_order_id, self.work_orders),
            (item.atom_id, self.atoms),
            (item.item_id, self.atoms),
        ):
            if value in by_target:
                found.update(by_target[value])
        return found

    def touched_by_ids(self, items: Sequence[Item]) -> set[int]:
        """Indexes of the items a key, thread, work order or atom rule matches."""
        touched: set[int] = set()
        if self.keys:
            # Keys as one string, each followed by ".": a rule's "key." found at the start of an
            # item's key is the key itself or one below it.
            keys = _Batch([f"{key}." for key in map(_KEY, items)], _ITEM_SEP)
            for prefix in self.key_prefixes:
                position = keys.text.find(prefix)
                while position != -1:
                    if position == 0 or keys.text[position - 1] == _ITEM_SEP:
                        touched.add(keys.index_at(position))
                    position = keys.text.find(prefix, position + 1)
        if self.threads:
            threads = self.threads
            touched.update(i for i, item in enumerate(items) if item.thread_id in threads)
        if self.work_orders:
            work_orders = self.work_orders
            touched.update(i for i, item in enumerate(items) if item.work_order_id in work_orders)
        if self.atoms:
            atoms = self.atoms
            touched.update(
                i for i, item in enumerate(items) if item.atom_id in atoms or item.item_id in atoms
            )
        return touched

    def topic_matches(self, items: Sequence[Item]) -> dict[int, AbstractSet[RuleId]]:
        """Topic rules matched per item index: whole words of the item's text or of a topic."""
        if not self.probes or not items:
            return {}
        by_text = self._text_memo.lookup(list(map(_TEXT, items)), self._scan_texts)
        by_topics = self._topics_memo.lookup(list(map(_TOPICS, items)), self._scan_topics)
        return {
            index: text | topic
            for index, (text, topic) in enumerate(zip(by_text, by_topics, strict=True))
            if text or topic
        }

    def _scan_texts(self, texts: Sequence[str]) -> dict[int, set[RuleId]]:
        found: dict[int, set[RuleId]] = {}
        batch = _Batch(list(texts), _ITEM_SEP)
        self._scan(batch, found, batch.index_at)
        return found

    def _scan_topics(self, topic_lists: Sequence[tuple[str, ...]]) -> dict[int, set[RuleId]]:
        found: dict[int, set[RuleId]] = {}
        flat = list(chain.from_iterable(topic_lists))
        if flat:
            topics = _Batch(flat, _TOPIC_SEP)
            owners: list[int] = []

            def owner_of(position: int) -> int:
                # The topic's index in the flat list, then its list: the first whose running count exceeds it.
                if not owners:
                    owners.extend(accumulate(map(len, topic_lists)))
                return bisect_left(owners, topics.index_at(position) + 1)

            self._scan(topics, found, owner_of)
        return found

    def _scan(
        self, batch: _Batch, found: dict[int, set[RuleId]], owner_of: Callable[[int], int]
    ) -> None:
        text = batch.text
        for probe, topics in self.probes.items():
            position = text.find(probe)
            while position != -1:
                word = word_at(text, position)
                if word is not None:
                    word_stem = inflection_stem(word)
                    for topic in topics:
                        if topic.longest == word_stem and (
                            len(topic.phrase) == 1
                            or has_phrase(batch.field_at(position), topic.phrase)
                        ):
                            found.setdefault(owner_of(position), set()).add(topic.rule)
                position = text.find(probe, position + 1)

    def matches(self, items: Sequence[Item]) -> list[list[RuleId]]:
        """Every rule each item falls under, each once, sorted."""
        topics = self.topic_matches(items)
        touched = self.touched_by_ids(items)
        return [
            sorted(
                (self.id_matches(item) if index in touched else set()) | topics.get(index, set())
            )
            for index, item in enumerate(items)
        ]


K = TypeVar("K", bound=Hashable)
_NONE: frozenset[RuleId] = frozenset()


class _Memo(Generic[K]):
    """Topic matches by value, bounded: when full it starts over, so it never grows past
    MEMO_ENTRIES and an answer never depends on what it holds."""

    def __init__(self) -> None:
        self._known: dict[K, frozenset[RuleId]] = {}

    def lookup(
        self, values: list[K], scan: Callable[[Sequence[K]], dict[int, set[RuleId]]]
    ) -> list[frozenset[RuleId]]:
        """The matches of each value; values not seen before are scanned together, once each."""
        known = self._known
        found = list(map(known.get, values))
        if None not in found:
            return found  # type: ignore[return-value]
        fresh = sorted(
            {value for value, matches in zip(values, found, strict=True) if matches is None}
        )  # type: ignore[type-var]
        scanned = scan(fresh)
        matches_of = {
            value: frozenset(scanned[i]) if i in scanned else _NONE for i, value in enumerate(fresh)
        }
        if len(known) + len(fresh) > MEMO_ENTRIES:
            known.clear()
        if len(fresh) <= MEMO_ENTRIES:
            known.update(matches_of)
        return [
            matches if matches is not None else matches_of[value]
            for value, matches in zip(values, found, strict=True)
        ]


class _Batch:
    """Fields joined by a separator and folded, with the field of any offset found on demand."""

    def __init__(self, fields: list[str], separator: str) -> None:
        joined = separator.join(fields)
        if joined.isascii():
            self.text, self._fields = joined.lower(), fields
        else:
            # Case folding may change lengths, so fields are folded one by one before measuring.
            self._fields = list(map(fold, fields))
            self.text = separator.join(self._fields)
        self._separator = separator
        self._ends: list[int] | None = None

    def index_at(self, position: int) -> int:
        """Index of the field holding the offset."""
        if self._ends is None:
            # Field i and the separator after it end before ends[i]: its length plus one,
            # summed over the fields up to it.
            self._ends = list(accumulate(map((1).__add__, map(len, self._fields))))
        return bisect_right(self._ends, position)

    def field_at(self, position: int) -> str:
        """The folded field holding the offset."""
        start = self.text.rfind(self._separator, 0, position) + 1
        end = self.text.find(self._separator, position)
        return self.text[start : end if end != -1 else len(self.text)]
