"""Indexed documents as the domain sees them: id, kind, terms, ranking signals, opaque payload."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from enum import IntEnum


class Kind(IntEnum):
    """Kind of indexed document (values equal the proto enum's)."""

    ATOM = 1
    TURN = 2
    DIGEST = 3


# The kinds whose vectors the sentence encoder makes (when the ranker has it): a turn is what
# the user said in their own words, one or two sentences, what the encoder reads best ("what
# diet am I following" against "I'm doing the keto thing"). Atoms keep the static table with
# their key's slot: on the encoder a greeting ("hello Selene") came within its floors of a
# wife's name and brought a clarification question the user had no reason for. A digest,
# many sentences on several things, keeps the static table's mean of its words.
SENTENCE_KINDS = frozenset({Kind.TURN})


@dataclass(frozen=True)
class AtomSignals:
    """The seed 001 §2.11.9 ranking signals of an atom."""

    pinned: bool = False
    # Provenance priority: 4 verified, 3 user-stated, 2 tool-derived, 1 inferred, 0 unknown.
    provenance: int = 0
    confidence_bp: int = 0
    last_use_us: int = 0
    use_count: int = 0
    # Replaced by a newer atom of the same key: indexed (rebuilds stay equal), never returned.
    superseded: bool = False


# Turns and digests have no ranking signals: one shared value.
NO_SIGNALS = AtomSignals()


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """One document: `terms` are its stemmed index terms (with field boosts already
    applied as repetitions), `payload` the canonical serialized document returned to callers.
    Slotted: a ranker holds one per document of every cached user."""

    doc_id: str
    kind: Kind
    terms: tuple[str, ...]
    time_us: int
    signals: AtomSignals
    payload: bytes
    # An atom that is a standing constraint (memmesh.policy.standing) carries its text here,
    # so a request can be compared with it; empty for every other document.
    constraint_text: str = ""
    # The text's quantised dense vector (dense.py), derived at write time; b'' for none. An
    # index keeps it in its dense rows only (without_vector).
    vector: bytes = b""
    # A digest's evidence: the turns its summary quotes (empty for atoms and turns). An index
    # keeps them in its citation map (UserIndex), not with the document.
    cites: tuple[str, ...] = ()
    # A turn's names it addresses someone by (index terms; Analyzer.addressed), empty for
    # atoms and digests. An index counts them by name (UserIndex), not with the document.
    addressed: tuple[str, ...] = ()

    def term_counts(self) -> Counter[str]:
        """How many times each term occurs (computed when asked: not kept with the document)."""
        return Counter(self.terms)

    @property
    def atom_order(self) -> tuple[int, int, int, int, int, str]:
        """Seed 001 §2.11.9: pinned, provenance, confidence, last use, use count, then id
        (computed when asked: not kept with the document)."""
        return (*self.signal_order(), self.doc_id)

    def without_vector(self) -> IndexDoc:
        """The document with its vector left out (itself when it has none)."""
        return replace(self, vector=b"") if self.vector else self

    def signal_order(self) -> tuple[int, int, int, int, int]:
        """atom_order without the id (not kept: the index holds it in its slot columns)."""
        s = self.signals
        return (-int(s.pinned), -s.provenance, -s.confidence_bp, -s.last_use_us, -s.use_count)


@dataclass(frozen=True)
class Caps:
    """How many candidates of each kind one retrieval may return."""

    max_atoms: int
    max_turns: int
    max_digests: int


@dataclass(frozen=True)
class Candidate:
    """A returned document with its integer relevance and relevance band."""

    doc: IndexDoc
    relevance_micros: int
    tier: int


@dataclass(frozen=True)
class Retrieval:
    """Candidates of one retrieval, each list in its final order."""

    atoms: tuple[Candidate, ...]
    turns: tuple[Candidate, ...]
    digests: tuple[Candidate, ...]
    generic_query: bool
    # The user's standing constraints the request could touch, in §2.11.9 order.
    standing: tuple[Candidate, ...] = ()
