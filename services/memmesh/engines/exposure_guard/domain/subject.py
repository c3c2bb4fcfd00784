"""The subject of a DO_NOT_MENTION rule: a rule on a relation, topic or key also covers the
names of the atoms it matched that are about the subject ("relationship.brother" -> "User has a
brother named Kwame." -> "kwame") and the aliases the entity graph links to those names. The terms are worked out when the
rule is set (and again when new atoms about the subject show up), stored with the rule, and
matched like topic words: whole words, case-insensitive, plurals and possessives included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from memmesh.engines.exposure_guard.domain.filtering import CompiledRules
from memmesh.engines.exposure_guard.domain.matching import Item, RuleMatcher
from memmesh.engines.exposure_guard.domain.rules import RuleId, TargetType
from memmesh.engines.exposure_guard.domain.words import stems
from memmesh.text import CONVERSATION_STOP_WORDS, entity_node_id, fold, sentences

# Bounds of one rule's terms, so a rule stays cheap to compile and to store.
MAX_TERMS = 64
MAX_TERM_CHARS = 64
# Graph nodes asked for (the Expand limit) and neighbours taken per node.
MAX_GRAPH_NODES = 20
GRAPH_FAN_OUT = 4

_CAPITALISED = re.compile(r"[^\W\d_][\w'’-]*")
_WORD = re.compile(r"\w")
# Capitalised words that name nothing: how atoms are phrased ("User has ...") and openers.
_NOT_NAMES = frozenset(
    {"user", "users", "user's", "i", "i'm", "i've", "i'll", "i'd"} | set(CONVERSATION_STOP_WORDS)
)


@dataclass(frozen=True, slots=True)
class SubjectAtom:
    """The parts of an atom that tell what it is about and what it is called."""

    atom_id: str
    key: str
    text: str
    topics: tuple[str, ...] = ()
    critical_tokens: tuple[str, ...] = ()


def normal_term(raw: str) -> str:
    """A term as stored and matched: folded, single spaces, no quotes or possessive; '' when
    it is no usable name (no letter, too long, or a common word)."""
    term = " ".join(fold(raw).split()).strip("'\"-")
    if term.endswith("'s"):
        term = term[:-2]
    if not term or len(term) > MAX_TERM_CHARS or not _WORD.search(term):
        return ""
    if term in _NOT_NAMES or len(term) < 2:
        return ""
    return term


def names_in(text: str, critical_tokens: Iterable[str] = ()) -> list[str]:
    """The names an atom carries: its critical tokens and its capitalised words (consecutive
    ones joined), leaving out openers and how atoms are phrased; in first-seen order."""
    found: dict[str, None] = {}
    for token in critical_tokens:
        found.setdefault(token, None)
    for sentence in sentences(text):
        run: list[str] = []
        for word in [*sentence.split(), ""]:
            bare = word.strip('.,;:!?()[]"“”')
            is_name = (
                bool(bare)
                and bare[0].isupper()
                and bool(_CAPITALISED.fullmatch(bare))
                and normal_term(bare) != ""
            )
            if is_name:
                run.append(bare)
                if word != word.rstrip('.,;:!?)]"”'):
                    # Punctuation closes a run ("Kwame, Ama" are two names).
                    found.setdefault(" ".join(run), None)
                    run = []
                continue
            if run:
                found.setdefault(" ".join(run), None)
                run = []
    return list(found)


def matched_atoms(rule: RuleId, atoms: Sequence[SubjectAtom]) -> list[SubjectAtom]:
    """The atoms the rule's own target matches (key, topic or atom id)."""
    matcher = RuleMatcher.of([rule])
    items = [Item(a.atom_id, a.key, a.topics, a.text, atom_id=a.atom_id) for a in atoms]
    return [atom for atom, hit in zip(atoms, matcher.matches(items), strict=True) if hit]


def is_about(rule: RuleId, key: str) -> bool:
    """Whether an atom of this key is about the rule's subject rather than merely naming it:
    a key or atom rule matched it by what it is; a topic rule's words must be words of its
    key ("brother" and "relationship.brother.kwame", not "portland" and
    "relationship.sister.sarah" for "User's sister Sarah lives in Portland.")."""
    if rule.target_type is not TargetType.TOPIC:
        return True
    key_words = set(stems(fold(key.replace(".", " ").replace("_", " "))))
    return all(word in key_words for word in stems(fold(rule.target)))


def subject_names(rule: RuleId, atoms: Sequence[SubjectAtom]) -> list[str]:
    """The names of the atoms the rule matches and that are about its subject, in
    first-seen order."""
    found: dict[str, None] = {}
    for atom in matched_atoms(rule, atoms):
        if not is_about(rule, atom.key):
            continue
        for name in names_in(atom.text, atom.critical_tokens):
            found.setdefault(name, None)
    return list(found)


def aliases(rule: RuleId, names: Sequence[str], labels: Sequence[str]) -> list[str]:
    """The graph labels that are other forms of the subject's names or target ("Kwame
    Mensah" for "Kwame"), each once; nodes merely mentioned beside the subject (a city, the
    user's own name) are not the subject."""
    words = {w for text in (*names, rule.target) for w in stems(fold(text))}
    return list(dict.fromkeys(label for label in labels if words & set(stems(fold(label)))))


def graph_node_ids(rule: RuleId, names: Sequence[str]) -> list[str]:
    """Graph nodes of the subject: its names and, for a topic rule, the topic itself."""
    labels = list(names)
    if rule.target_type is TargetType.TOPIC:
        labels.append(rule.target)
    ids = dict.fromkeys(entity_node_id(label) for label in labels if label.strip())
    return list(ids)[:MAX_GRAPH_NODES]


def merged_terms(*groups: Iterable[str]) -> tuple[str, ...]:
    """Terms of every group, normalised, each once, sorted, at most MAX_TERMS (the kept
    ones are the first in sort order, so the same inputs always keep the same terms)."""
    terms = {normal for group in groups for term in group if (normal := normal_term(term))}
    return tuple(sorted(terms)[:MAX_TERMS])


# A name as said: one to three words (_name_part keeps the capitalised ones).
_NAME_AS_SAID = r"[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,2}"
# Words between the relation and the name ("my sister's name is Ama", "my boss, Ama").
_BEFORE_NAME = (
    r"(?i:(?:'s|’s)?(?:\s*,\s*|\s+)(?:(?:whose\s+)?name\s+is\s+|is\s+(?:named|called)\s+|"
    r"named\s+|called\s+|is\s+)?)"
)
_AFTER_NAME = r"(?i:\s*,\s*who\s+is\s+|\s*,\s*|\s+is\s+)"


@cache
def _said_patterns(phrase: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """How a relation and a name are said together, both ways round (the relation in any
    case, the name as written)."""
    relation = r"\s+".join(rf"{re.escape(word)}(?:s|es)?" for word in phrase.split())
    after = re.compile(rf"(?i:\bmy\s+{relation}){_BEFORE_NAME}(?P<name>{_NAME_AS_SAID})")
    before = re.compile(rf"(?P<name>{_NAME_AS_SAID}){_AFTER_NAME}(?i:my\s+{relation})\b")
    return after, before


def _name_part(raw: str, *, trailing: bool = False) -> str:
    """The run of words of a matched name that are names: the leading run after the
    relation (stops at "lives", "And"), the trailing one before it ("Then Tom, my sister")."""
    words = raw.split()
    kept: list[str] = []
    for word in reversed(words) if trailing else words:
        bare = word.strip("'’-")
        if not bare or not bare[0].isupper() or normal_term(bare) == "":
            break
        kept.append(bare)
    return " ".join(reversed(kept) if trailing else kept)


def said_names(rule: RuleId, text: str) -> list[str]:
    """Names a text gives the subject of a rule on a relation or topic in so many words
    ("my mentor Ama", "my boss's name is Ama", "Ama, my barber", "Ama is my coach"): how a
    DO_NOT_MENTION rule learns the name of someone no atom is about (a relation the
    extractor does not know, or a fact still to be extracted)."""
    if rule.target_type is not TargetType.TOPIC:
        return []
    phrase = " ".join(fold(rule.target).split())
    if not phrase:
        return []
    found: dict[str, None] = {}
    after, before = _said_patterns(phrase)
    for pattern, trailing in ((after, False), (before, True)):
        for match in pattern.finditer(text):
            name = _name_part(match.group("name"), trailing=trailing)
            if name:
                found.setdefault(name, None)
    return list(found)


def new_subject_names(rules: CompiledRules, items: Sequence[Item]) -> dict[RuleId, tuple[str, ...]]:
    """Names carried by atom items that a DO_NOT_MENTION rule's own target matches, that are
    about its subject (is_about) and that the rule does not cover yet, by rule (empty when
    there are none)."""
    atoms = [item for item in items if item.atom_id]
    matcher = rules.mention_targets
    if not atoms or matcher.empty:
        return {}
    found: dict[RuleId, dict[str, None]] = {}
    for item, hits in zip(atoms, matcher.matches(atoms), strict=True):
        if not hits:
            continue
        names = names_in(item.text)
        for rule in hits:
            if not is_about(rule, item.key):
                continue
            known = set(rules.terms.get(rule, ()))
            for name in names:
                normal = normal_term(name)
                if normal and normal not in known:
                    found.setdefault(rule, {})[normal] = None
    return {rule: tuple(names) for rule, names in found.items()}


def said_subject_names(
    rules: CompiledRules, items: Sequence[Item]
) -> dict[RuleId, tuple[str, ...]]:
    """Names the items give in so many words to the subject of a DO_NOT_MENTION rule on a
    relation or topic that matched them (said_names) and that the rule does not cover yet,
    by rule (empty when there are none)."""
    matcher = rules.mention_targets
    if matcher.empty or not matcher.probes:
        return {}
    found: dict[RuleId, dict[str, None]] = {}
    for item, hits in zip(items, matcher.matches(items), strict=True):
        for rule in hits:
            known = set(rules.terms.get(rule, ()))
            for name in said_names(rule, item.text):
                normal = normal_term(name)
                if normal and normal not in known:
                    found.setdefault(rule, {})[normal] = None
    return {rule: tuple(names) for rule, names in found.items()}
