"""Documents of one kind numbered by slot, with what ranking sorts them by held as arrays.

Ranking scores and sorts thousands of matching documents per query; with each document a
slot, that work is a few numpy operations over arrays instead of Python per document. The
documents themselves are held as columns too, not as one object each (a ranker caches every
document of its users): an IndexDoc is made again from its slot when one is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from memmesh.engines.retrieval_ranker.domain.documents import (
    NO_SIGNALS,
    AtomSignals,
    IndexDoc,
    Kind,
)

# Slots the arrays start with and add at least when they grow (as DenseIndex's rows).
GROWTH_SLOTS = 16
# Columns of SlotTable.order: IndexDoc.signal_order(), atom_order without the id.
ORDER_COLUMNS = 5
# A slot's record: its payload, then its terms joined by TERM_SEPARATOR (index terms are runs
# of letters and digits).
TERM_SEPARATOR = " "
# The records are packed again once at least this many of their bytes are freed ones and
# they are over half of all.
RECORDS_COMPACT_MIN_BYTES = 4096
# A document is made again whenever one is asked for: a kind is found by its value without
# the enum's lookup.
KINDS = {kind.value: kind for kind in Kind}
Column = TypeVar("Column", bound=np.generic)


class SlotTable:
    """Each indexed document holds one slot until removed; a freed slot is reused.

    `order` holds the seed 001 §2.11.9 order without the id (pinned, provenance,
    confidence, last use, use count, each negated so ascending is first), `newest_first`
    the negated time, `length` the number of index terms; a free slot's values are stale
    and never read (no posting or ranking names a free slot). With `kind` they are every
    field of a document but its id (a list by slot), its payload and terms (one packed
    record a slot, `records`) and its constraint text (by slot, for the few documents that
    have one); its vector is the kind's dense row (KindIndex), and a document made again
    from its slot comes without it.

    The records are one bytearray: a bytes object and a tuple a document cost about 100
    bytes of headers and pointers more than the bytes they hold, for every document of
    every cached user. A freed slot's record is zeroed and left in place until the freed
    bytes are over half of all; then the records are packed again.
    """

    def __init__(self) -> None:
        self._slot_of: dict[str, int] = {}
        # By slot; None marks a free slot.
        self._ids: list[str | None] = []
        self._records = bytearray()
        self._freed_record_bytes = 0
        self._constraint_texts: dict[int, str] = {}
        self._free: list[int] = []
        self.order = np.zeros((0, ORDER_COLUMNS), dtype=np.int64)
        self.newest_first = np.zeros(0, dtype=np.int64)
        self.length = np.zeros(0, dtype=np.int64)
        self.superseded = np.zeros(0, dtype=np.bool_)
        self.kind = np.zeros(0, dtype=np.int8)
        # Where each slot's record starts in `_records`, its payload's and its terms' lengths.
        self.record_start = np.zeros(0, dtype=np.int64)
        self.payload_length = np.zeros(0, dtype=np.int32)
        self.terms_length = np.zeros(0, dtype=np.int32)

    def __len__(self) -> int:
        return len(self._slot_of)

    @property
    def size(self) -> int:
        """One more than the highest slot ever held: the length of a per-slot score array."""
        return len(self._ids)

    @property
    def record_bytes(self) -> int:
        """Bytes the records hold, freed ones not yet packed away included."""
        return len(self._records)

    def slot_of(self, doc_id: str) -> int | None:
        """The slot of an indexed document."""
        return self._slot_of.get(doc_id)

    def get(self, doc_id: str) -> IndexDoc | None:
        """The document with this id, if it holds a slot."""
        slot = self._slot_of.get(doc_id)
        return None if slot is None else self.doc(slot)

    def docs(self) -> Iterator[IndexDoc]:
        """Every document holding a slot, in slot order."""
        return (self.doc(slot) for slot, doc_id in enumerate(self._ids) if doc_id is not None)

    def doc(self, slot: int) -> IndexDoc:
        """The document holding a slot (the slot must be held)."""
        pinned, provenance, confidence_bp, last_use_us, use_count, doc_id = self.atom_order(slot)
        superseded = bool(self.superseded[slot])
        signals = (
            AtomSignals(
                pinned=bool(pinned),
                provenance=-provenance,
                confidence_bp=-confidence_bp,
                last_use_us=-last_use_us,
                use_count=-use_count,
                superseded=superseded,
            )
            if superseded or pinned or provenance or confidence_bp or last_use_us or use_count
            else NO_SIGNALS
        )
        payload, terms = self._record(slot)
        return IndexDoc(
            doc_id,
            KINDS[int(self.kind[slot])],
            terms,
            -int(self.newest_first[slot]),
            signals,
            payload,
            self._constraint_texts.get(slot, ""),
        )

    def _record(self, slot: int) -> tuple[bytes, tuple[str, ...]]:
        start = self.record_start.item(slot)
        terms_start = start + self.payload_length.item(slot)
        terms_end = terms_start + self.terms_length.item(slot)
        records = self._records
        terms = records[terms_start:terms_end].decode()
        # Made for a caller to read, not kept: the index's own copies are its postings' keys.
        return bytes(records[start:terms_start]), tuple(
            terms.split(TERM_SEPARATOR)
        ) if terms else ()

    def id_of(self, slot: int) -> str:
        """The id of the document holding a slot (the slot must be held)."""
        doc_id = self._ids[slot]
        assert doc_id is not None, f"slot {slot} is free"
        return doc_id

    def atom_order(self, slot: int) -> tuple[int, int, int, int, int, str]:
        """IndexDoc.atom_order of the document holding a slot, read from its columns."""
        pinned, provenance, confidence_bp, last_use_us, use_count = self.order[slot].tolist()
        return (pinned, provenance, confidence_bp, last_use_us, use_count, self.id_of(slot))

    def held(self) -> NDArray[np.intp]:
        """Every held slot, ascending."""
        return np.fromiter(sorted(self._slot_of.values()), dtype=np.intp, count=len(self._slot_of))

    def add(self, doc: IndexDoc) -> int:
        """Give a document (whose id holds no slot) a slot and fill its columns."""
        if self._free:
            slot = self._free.pop()
            self._ids[slot] = doc.doc_id
        else:
            slot = len(self._ids)
            self._ids.append(doc.doc_id)
            self._reserve(slot + 1)
        self._keep_record(slot, doc)
        self._slot_of[doc.doc_id] = slot
        self._keep_sparse(slot, doc)
        self.order[slot] = doc.signal_order()
        self.newest_first[slot] = -doc.time_us
        self.length[slot] = len(doc.terms)
        self.superseded[slot] = doc.signals.superseded
        self.kind[slot] = doc.kind
        return slot

    def extend(self, docs: list[IndexDoc]) -> range:
        """add() each of these documents (no two with one id, none holding a slot), with each
        column filled once for all of them instead of once per document (a whole load);
        their slots, in order."""
        start = len(self._ids)
        end = start + len(docs)
        if not docs:
            return range(start, end)
        self._ids.extend(doc.doc_id for doc in docs)
        self._reserve(end)
        self._slot_of.update(zip((doc.doc_id for doc in docs), range(start, end), strict=True))
        for slot, doc in enumerate(docs, start=start):
            self._keep_record(slot, doc)
            self._keep_sparse(slot, doc)
        self.order[start:end] = [doc.signal_order() for doc in docs]
        self.newest_first[start:end] = [-doc.time_us for doc in docs]
        self.length[start:end] = [len(doc.terms) for doc in docs]
        self.superseded[start:end] = [doc.signals.superseded for doc in docs]
        self.kind[start:end] = [doc.kind for doc in docs]
        return range(start, end)

    def _keep_record(self, slot: int, doc: IndexDoc) -> None:
        terms = TERM_SEPARATOR.join(doc.terms).encode()
        self.record_start[slot] = len(self._records)
        self.payload_length[slot] = len(doc.payload)
        self.terms_length[slot] = len(terms)
        self._records += doc.payload
        self._records += terms

    def _free_record(self, slot: int) -> None:
        start = self.record_start.item(slot)
        freed = self.payload_length.item(slot) + self.terms_length.item(slot)
        # Zeroed at once: a removed document may be a forgotten one, and its words must not
        # wait in the buffer for the next packing.
        self._records[start : start + freed] = bytes(freed)
        self._freed_record_bytes += freed
        self.payload_length[slot] = self.terms_length[slot] = 0
        if (
            self._freed_record_bytes >= RECORDS_COMPACT_MIN_BYTES
            and 2 * self._freed_record_bytes > len(self._records)
        ):
            self._compact_records()

    def _compact_records(self) -> None:
        """The held slots' records packed again, in slot order, without the freed ones."""
        packed = bytearray()
        for slot in self._slot_of.values():
            start = int(self.record_start[slot])
            end = start + int(self.payload_length[slot]) + int(self.terms_length[slot])
            self.record_start[slot] = len(packed)
            packed += self._records[start:end]
        self._records = packed
        self._freed_record_bytes = 0

    def _keep_sparse(self, slot: int, doc: IndexDoc) -> None:
        if doc.constraint_text:
            self._constraint_texts[slot] = doc.constraint_text

    def remove(self, doc_id: str) -> int | None:
        """Free a document's slot; returns it, or None when the id held none."""
        slot = self._slot_of.pop(doc_id, None)
        if slot is not None:
            self._ids[slot] = None
            self._free_record(slot)
            self._constraint_texts.pop(slot, None)
            self._free.append(slot)
        return slot

    def _reserve(self, slots: int) -> None:
        if slots <= len(self.length):
            return
        # A quarter as many again each time: amortised constant cost per document, little spare.
        capacity = max(slots, len(self.length) * 5 // 4 + GROWTH_SLOTS)
        self.order = _grown(self.order, capacity)
        self.newest_first = _grown(self.newest_first, capacity)
        self.length = _grown(self.length, capacity)
        self.superseded = _grown(self.superseded, capacity)
        self.kind = _grown(self.kind, capacity)
        self.record_start = _grown(self.record_start, capacity)
        self.payload_length = _grown(self.payload_length, capacity)
        self.terms_length = _grown(self.terms_length, capacity)


def _grown(column: NDArray[Column], capacity: int) -> NDArray[Column]:
    grown = np.zeros((capacity, *column.shape[1:]), dtype=column.dtype)
    grown[: len(column)] = column
    return grown
