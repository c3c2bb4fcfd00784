"""Global derived signals (seed 001 §2.4.3): opt-in only, de-identified, non-reversible.
A user who opted in contributes generic heard -> meant mappings (lower-case words, no digits,
none of their own names); a contribution is stored under a keyed pseudonym of the user, never
the user id, and a signal is released only once at least k distinct users contributed it.
Signals feed training and evaluation only: nothing reads them for permissions."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass

from memmesh.engines.atom_extractor.learning.profile import LearnedPair, PairKind

_GENERIC = re.compile(r"[a-z]+(?: [a-z]+){0,2}")
CONTRIBUTED_KINDS = (PairKind.SLANG, PairKind.CORRECTION)


@dataclass(frozen=True)
class Signal:
    kind: str
    heard: str
    meant: str

    @property
    def signal_id(self) -> str:
        return hashlib.sha256(f"{self.kind}\0{self.heard}\0{self.meant}".encode()).hexdigest()


@dataclass(frozen=True)
class Released:
    signal: Signal
    contributors: int


def contributor_of(secret: bytes, tenant_id: str, user_id: str) -> str:
    """A keyed pseudonym: counts distinct users without naming one."""
    return hmac.new(secret, f"{tenant_id}\0{user_id}".encode(), hashlib.sha256).hexdigest()


def generic_signals(pairs: Iterable[LearnedPair], own_names: Iterable[str]) -> list[Signal]:
    """The pairs that identify nobody: lower-case words only (a capital marks a name), no
    digits, at most three words a side, and none of the user's own names."""
    names = {n.lower() for n in own_names}
    signals = []
    for pair in pairs:
        heard, meant = pair.said.strip(), pair.meant.strip()
        if pair.kind not in CONTRIBUTED_KINDS:
            continue
        if not (_GENERIC.fullmatch(heard) and _GENERIC.fullmatch(meant)):
            continue
        if heard in names or meant in names:
            continue
        signals.append(Signal(pair.kind.value, heard, meant))
    return sorted(set(signals), key=lambda s: (s.kind, s.heard, s.meant))


def releasable(counts: Iterable[Released], k: int) -> list[Released]:
    """Signals with at least k contributors, most contributors first, then by text."""
    kept = [r for r in counts if r.contributors >= k]
    return sorted(
        kept, key=lambda r: (-r.contributors, r.signal.kind, r.signal.heard, r.signal.meant)
    )
