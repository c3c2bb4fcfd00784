"""Which atoms a user turn refers to, and recording their use (Brief stays read-only)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from memmesh.engines.atom_extractor.domain.capsule import AtomStatus
from memmesh.engines.atom_extractor.domain.working_set import ChangeContext, WorkingCapsule
from memmesh.text import plain_words

# Sensitive class words are added to topics for rules; on their own they name no atom.
_CLASS_WORDS = frozenset({"health", "finances", "credentials", "secret"})
_MIN_TOPIC_CHARS = 3
# A word refers to an atom only while it names few of the user's atoms: "Sarah" names her,
# but "Lisbon" in a history of hundreds of Lisbon facts names none in particular. Without
# this bound a turn would rewrite (and re-index) every atom sharing a common word, so the
# cost of a turn would grow with the user's history.
MAX_ATOMS_PER_REFERENCE = 8


def reference_topics(topics: Iterable[str]) -> set[str]:
    """The topics of an atom a turn's word can refer to it by."""
    return {t for t in topics if t not in _CLASS_WORDS and len(t) >= _MIN_TOPIC_CHARS}


def turn_words(text: str) -> set[str]:
    """The words of a turn an atom's topic may match."""
    return set(plain_words(text))


def referenced_ids(ws: WorkingCapsule, text: str) -> list[str]:
    """Live atoms one of whose topic words (key words, names) occurs in the turn, by id; a
    word naming more than MAX_ATOMS_PER_REFERENCE live atoms refers to none of them."""
    words = turn_words(text)
    if not words:
        return []
    named: dict[str, list[str]] = {}
    for atom in ws.atoms():
        if atom.status is AtomStatus.SUPERSEDED:
            continue
        for word in reference_topics(atom.topics) & words:
            named.setdefault(word, []).append(atom.atom_id)
    found = {
        atom_id
        for atom_ids in named.values()
        if len(atom_ids) <= MAX_ATOMS_PER_REFERENCE
        for atom_id in atom_ids
    }
    return sorted(found)


def record_use(ws: WorkingCapsule, atom_ids: list[str], ctx: ChangeContext) -> list[str]:
    """Raise use_count and last_use_time of atoms not already changed by this turn."""
    changed = {c.atom.atom_id for c in ws.changes}
    used = []
    for atom_id in atom_ids:
        atom = ws.get(atom_id)
        if atom is None or atom_id in changed:
            continue
        ws.put(replace(atom, use_count=atom.use_count + 1, last_use_time_us=ctx.now_us))
        used.append(atom_id)
    return used
