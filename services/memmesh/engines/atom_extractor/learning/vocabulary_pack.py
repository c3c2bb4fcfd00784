"""Company vocabulary packs (seed 001 §2.4.2): non-sensitive only, versioned and audited.
A pack is refused whole, naming the first offending entry, when an entry looks like an
identity document (or any long number) or is a person's name the tenant did not permit."""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass


class EntryKind(enum.StrEnum):
    PRODUCT = "PRODUCT"
    TERM = "TERM"
    ROLE = "ROLE"
    PERSON_NAME = "PERSON_NAME"


@dataclass(frozen=True)
class PackEntry:
    term: str
    kind: EntryKind
    sounds_like: str = ""


@dataclass(frozen=True)
class PackVersion:
    """One stored version with who added it, when and why."""

    version: int
    entries: tuple[PackEntry, ...]
    added_by: str
    reason: str
    add_time_us: int
    sha256: str


@dataclass(frozen=True)
class Refusal:
    """Why entry `index` may not be stored."""

    index: int
    field: str
    reason: str


_IDENTITY_WORDS = re.compile(
    r"\b(passport|ssn|social security|driver'?s licen[cs]e|national id|id card|"
    r"tax id|iban|credit card|birth certificate)\b",
    re.I,
)
# Identity documents and account numbers carry long digit runs (separators allowed).
_LONG_NUMBER = re.compile(r"(?:\d[\s-]?){6,}")
# A passport / ID style code: letters then at least six digits.
_DOCUMENT_CODE = re.compile(r"\b[A-Z]{1,3}\d{6,}\b")
_EMAIL = re.compile(r"\S+@\S+\.\S+")
_TITLED_NAME = re.compile(r"(?i:\b(?:mr|mrs|ms|miss|dr|prof)\.? )[A-Z][a-z]+")


def refusal_of(entries: Sequence[PackEntry], private_names_allowed: bool) -> Refusal | None:
    """The first entry the pack may not hold, or None."""
    for index, entry in enumerate(entries):
        for field_name, text in (("term", entry.term), ("sounds_like", entry.sounds_like)):
            if (
                _IDENTITY_WORDS.search(text)
                or _LONG_NUMBER.search(text)
                or _DOCUMENT_CODE.search(text)
                or _EMAIL.search(text)
            ):
                return Refusal(index, field_name, "looks like an identity document or number")
        if not private_names_allowed and _is_private_name(entry):
            return Refusal(index, "term", "private names need the tenant's permission")
    return None


def _is_private_name(entry: PackEntry) -> bool:
    """Declared a person's name, or written as one (a title before a capitalised name)."""
    return entry.kind is EntryKind.PERSON_NAME or bool(_TITLED_NAME.search(entry.term))


def canonical(entries: Sequence[PackEntry]) -> bytes:
    """Entries sorted by term then kind, as compact JSON: the hashed and stored form."""
    ordered = sorted(entries, key=lambda e: (e.term.lower(), e.term, e.kind.value))
    body = [[e.term, e.kind.value, e.sounds_like] for e in ordered]
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def entries_of(raw: bytes) -> tuple[PackEntry, ...]:
    return tuple(PackEntry(t, EntryKind(k), s) for t, k, s in json.loads(raw))


def sha256_of(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def pack_hints(entries: Sequence[PackEntry]) -> tuple[list[str], list[tuple[str, str]]]:
    """The pack's terms and its sounds-like pairs (heard -> term), in canonical order."""
    ordered = entries_of(canonical(entries))
    terms = [e.term for e in ordered]
    pairs = [(e.sounds_like, e.term) for e in ordered if e.sounds_like]
    return terms, pairs
