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
