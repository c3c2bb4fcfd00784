"""The answer to "What do you remember about me?": a bounded summary of safe atoms (seed 001 §2.11.11, Q16)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.engines.exposure_guard.domain.filtering import CompiledRules, may_travel
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.rules import Channel
from memmesh.policy.sensitivity import Exposure

MAX_ITEMS = 10
MAX_BYTES = 1024


@dataclass(frozen=True)
class SummaryAtom:
    """The parts of an atom the summary needs."""

    atom_id: str
    key: str
    text: str
    topics: tuple[str, ...]
    exposure: Exposure
    pinned: bool
    confidence_bp: int
    superseded: bool = False


@dataclass(frozen=True)
class RecallSummary:
    items: tuple[str, ...]
    atom_ids: tuple[str, ...]
    omitted_count: int


def _travels(atom: SummaryAtom, channel: Channel, speak_text_allowed: bool) -> bool:
    # Pull-only atoms and rules do not apply: the user asked.
    if atom.superseded or not atom.text.strip():
        return False
    return may_travel(atom.exposure, channel, speak_text_allowed)


def _safe_atoms(
    rules: CompiledRules, atoms: Sequence[SummaryAtom], channel: Channel, speak_text_allowed: bool
) -> list[SummaryAtom]:
    candidates = [a for a in atoms if _travels(a, channel, speak_text_allowed)]
    items = [Item(a.atom_id, a.key, a.topics, a.text, atom_id=a.atom_id) for a in candidates]
    mentioned = rules.do_not_mention.matches(items)
    return [atom for atom, rules_hit in zip(candidates, mentioned, strict=True) if not rules_hit]


def recall_summary(
    rules: CompiledRules,
    atoms: Sequence[SummaryAtom],
    channel: Channel,
    *,
    speak_text_allowed: bool,
) -> RecallSummary:
    """Safe atoms' texts, pinned first, then by confidence, then by atom id; whole items only,
    at most MAX_ITEMS and MAX_BYTES of UTF-8 in all. Items that do not fit are counted as omitted."""
    safe = _safe_atoms(rules, atoms, channel, speak_text_allowed)
    safe.sort(key=lambda a: (not a.pinned, -a.confidence_bp, a.atom_id))
    items: list[str] = []
    atom_ids: list[str] = []
    used = omitted = 0
    for atom in safe:
        size = len(atom.text.encode())
        if len(items) < MAX_ITEMS and used + size <= MAX_BYTES:
            items.append(atom.text)
            atom_ids.append(atom.atom_id)
            used += size
        else:
            omitted += 1
    return RecallSummary(tuple(items), tuple(atom_ids), omitted)
