"""Freshness windows per atom type (seed 002 decay windows, seed 001 §2.11.10 staleness)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from memmesh.extraction.model import FactType

MICROS_PER_DAY = 86_400 * 1_000_000


@dataclass(frozen=True)
class FreshnessWindows:
    """How long an atom of each type stays fresh without a confirmation or a use, in days."""

    user_fact_days: int = 30
    user_pattern_days: int = 14
    shared_narrative_days: int = 7

    def window_us(self, atom_type: FactType) -> int:
        """The window of a type in microseconds."""
        days = {
            FactType.USER_FACT: self.user_fact_days,
            FactType.USER_PATTERN: self.user_pattern_days,
            FactType.SHARED_NARRATIVE: self.shared_narrative_days,
        }[atom_type]
        return days * MICROS_PER_DAY


class Timed(Protocol):
    """What staleness needs of an atom (a capsule AtomRecord has it all)."""

    @property
    def type(self) -> FactType: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def create_time_us(self) -> int: ...
    @property
    def confirm_time_us(self) -> int: ...
    @property
    def last_use_time_us(self) -> int: ...


def last_touch_us(atom: Timed) -> int:
    """The latest of creation, confirmation and use."""
    return max(atom.create_time_us, atom.confirm_time_us, atom.last_use_time_us)


def is_stale(atom: Timed, now_us: int, windows: FreshnessWindows) -> bool:
    """True when the atom was neither confirmed nor used within its type's window; pinned atoms never go stale."""
    if atom.pinned:
        return False
    return now_us - last_touch_us(atom) > windows.window_us(atom.type)
