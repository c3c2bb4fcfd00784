"""A user's capsule loaded for one request: changes accumulate here, then commit at once."""

from __future__ import annotations

from dataclasses import dataclass, replace

from memmesh.engines.atom_extractor.domain.capsule import (
    AtomChange,
    AtomRecord,
    AtomStatus,
    ChangeKind,
)

# seed 001 Q13 budget caps: per turn at most 5 new atoms and 5 updates.
MAX_NEW_ATOMS_PER_TURN = 5
MAX_UPDATES_PER_TURN = 5
# Evidence keeps the latest turns only, so an often-confirmed atom stays small.
MAX_EVIDENCE_TURNS = 8


@dataclass(frozen=True)
class ChangeContext:
    """Who and when: the scope, the request's marker (turn id or request id) and its `now`."""

    tenant_id: str
    user_id: str
    marker: str
    now_us: int
    session_id: str = ""

    @property
    def evidence_turn_id(self) -> str:
        """The turn this change is evidenced by; empty for changes not made by a turn."""
        return self.marker.removeprefix("turn:") if self.marker.startswith("turn:") else ""


class WorkingCapsule:
    """The atoms of one user with the versions they were loaded at."""

    def __init__(self, atoms: list[AtomRecord]) -> None:
        self._atoms = {atom.atom_id: atom for atom in atoms}
        self._loaded_versions = {atom.atom_id: atom.version for atom in atoms}
        self._deleted: dict[str, int] = {}
        self.changes: list[AtomChange] = []
        self.new_count = 0
        self.update_count = 0

    def get(self, atom_id: str) -> AtomRecord | None:
        return self._atoms.get(atom_id)

    def atoms(self) -> list[AtomRecord]:
        """Every atom held, in key then id order."""
        return sorted(self._atoms.values(), key=lambda a: (a.key, a.atom_id))

    def current(self, key: str) -> list[AtomRecord]:
        """Atoms of the key that are not superseded, by id."""
        return [a for a in self.atoms() if a.key == key and a.status is not AtomStatus.SUPERSEDED]

    def within_caps(self, new_atoms: int, updates: int) -> bool:
        """True when the turn may still create and update this many atoms."""
        return (
            self.new_count + new_atoms <= MAX_NEW_ATOMS_PER_TURN
            and self.update_count + updates <= MAX_UPDATES_PER_TURN
        )

    def put(self, atom: AtomRecord, change: AtomChange | None = None) -> AtomRecord:
        """Store a new state of an atom, its version raised by one."""
        previous = self._atoms.get(atom.atom_id)
        stored = replace(atom, version=(previous.version if previous else atom.version) + 1)
        self._atoms[atom.atom_id] = stored
        self._deleted.pop(atom.atom_id, None)
        if change is not None:
            self.changes.append(replace(change, atom=stored))
        return stored

    def delete(self, atom_id: str) -> AtomRecord | None:
        """Remove an atom's content entirely (forget)."""
        atom = self._atoms.pop(atom_id, None)
        if atom is not None and atom_id in self._loaded_versions:
            self._deleted[atom_id] = self._loaded_versions[atom_id]
        return atom

    def record(self, change: AtomChange) -> None:
        """Log a change that stores nothing (a drop)."""
        self.changes.append(change)

    def upserts(self) -> list[tuple[AtomRecord, int]]:
        """Atoms written by this request with the version each was loaded at (0 when new)."""
        loaded = self._loaded_versions
        return [
            (atom, loaded.get(atom_id, 0))
            for atom_id, atom in sorted(self._atoms.items())
            if atom.version != loaded.get(atom_id)
        ]

    def deletes(self) -> list[str]:
        return sorted(self._deleted)

    def touched_ids(self) -> list[str]:
        """Ids of atoms this request created, confirmed, corrected or used, in change order."""
        seen: dict[str, None] = {}
        for change in self.changes:
            if change.kind in (ChangeKind.FORGOTTEN, ChangeKind.DROPPED, ChangeKind.SUPERSEDED):
                continue
            if change.atom.atom_id in self._atoms:
                seen[change.atom.atom_id] = None
        return list(seen)


def change(kind: ChangeKind, atom: AtomRecord, reason_code: str, delta_bp: int = 0) -> AtomChange:
    """A change record (the atom is replaced by its stored state on put)."""
    return AtomChange(kind=kind, atom=atom, reason_code=reason_code, confidence_delta_bp=delta_bp)


def with_evidence(evidence: tuple[str, ...], turn_id: str) -> tuple[str, ...]:
    """Evidence with the turn appended once, latest turns kept."""
    if not turn_id or turn_id in evidence:
        return evidence
    return (*evidence, turn_id)[-MAX_EVIDENCE_TURNS:]
