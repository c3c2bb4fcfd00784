"""Row encoding of the capsule store (JSON bodies, enum values as strings)."""

from __future__ import annotations

import json
from dataclasses import asdict
from enum import Enum

from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    AtomStatus,
    Provenance,
    ProvenanceEntry,
    RejectionEntry,
)
from memmesh.extraction.model import FactType
from memmesh.policy.sensitivity import Exposure


def _plain(value: object) -> object:
    if isinstance(value, Exposure):
        return value.name  # stored by name, as it always was
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _dump(record: AtomRecord | RejectionEntry | ProvenanceEntry) -> str:
    return json.dumps(
        {k: _plain(v) for k, v in asdict(record).items()}, sort_keys=True, separators=(",", ":")
    )


def atom_body(atom: AtomRecord) -> str:
    """The stored body of an atom."""
    return _dump(atom)


def atom_of(body: str) -> AtomRecord:
    """An atom from its stored body."""
    data = json.loads(body)
    return AtomRecord(
        **{
            **data,
            "type": FactType(data["type"]),
            "provenance": Provenance(data["provenance"]),
            "exposure": Exposure[data["exposure"]],
            "status": AtomStatus(data["status"]),
            "critical_tokens": tuple(data["critical_tokens"]),
            "evidence_turn_ids": tuple(data["evidence_turn_ids"]),
            "topics": tuple(data["topics"]),
        }
    )


def rejection_body(entry: RejectionEntry) -> str:
    return _dump(entry)


def rejection_of(body: str) -> RejectionEntry:
    data = json.loads(body)
    return RejectionEntry(**{**data, "type": FactType(data["type"])})


def provenance_body(entry: ProvenanceEntry) -> str:
    return _dump(entry)


def provenance_of(body: str) -> ProvenanceEntry:
    return ProvenanceEntry(**json.loads(body))


def refs_body(atom_ids: tuple[str, ...]) -> str:
    return json.dumps(list(atom_ids))


def refs_of(body: str) -> tuple[str, ...]:
    return tuple(json.loads(body))
