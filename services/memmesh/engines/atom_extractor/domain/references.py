"""Which atoms a user turn refers to, and recording their use (Brief stays read-only)."""

from __future__ import annotations

from dataclasses import replace

from memmesh.engines.atom_extractor.domain.capsule import AtomStatus
from memmesh.engines.atom_extractor.domain.working_set import ChangeContext, WorkingCapsule
from memmesh.text import plain_words

# Sensitive class words are added to topics for rules; on their own they name no atom.
_CLASS_WORDS = frozenset({"health", "finances", "credentials", "secret"})
_MIN_TOPIC_CHARS = 3


def turn_words(text: str) -> set[str]:
    """The words of a turn an atom's topic may match."""
    return set(plain_words(text))


def referenced_ids(ws: WorkingCapsule, text: str) -> list[str]:
    """Live atoms one of whose topic words (key words, names) occurs in the turn, by id."""
    words = turn_words(text)
    if not words:
        return []
    found = []
    for atom in ws.atoms():
        if atom.status is AtomStatus.SUPERSEDED:
            continue
        topics = {t for t in atom.topics if t not in _CLASS_WORDS and len(t) >= _MIN_TOPIC_CHARS}
        if topics & words:
            found.append(atom.atom_id)
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
