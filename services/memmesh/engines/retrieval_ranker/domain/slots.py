"""Documents of one kind numbered by slot, with what ranking sorts them by held as arrays.

Ranking scores and sorts thousands of matching documents per query; with each document a
slot, that work is a few numpy operations over arrays instead of Python per document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from memmesh.engines.retrieval_ranker.domain.documents import IndexDoc

# Slots the arrays start with and add at least when they grow (as DenseIndex's rows).
GROWTH_SLOTS = 16
# Columns of SlotTable.order: IndexDoc.signal_order(), atom_order without the id.
ORDER_COLUMNS = 5
Column = TypeVar("Column", bound=np.generic)


class SlotTable:
    """Each indexed document holds one slot until removed; a freed slot is reused.

    `order` holds the seed 001 §2.11.9 order without the id (pinned, provenance,
    confidence, last use, use count, each negated so ascending is first), `newest_first`
    the negated time, `length` the number of index terms; a free slot's values are stale
    and never read (no posting or ranking names a free slot).
    """

    def __init__(self) -> None:
        self._slot_of: dict[str, int] = {}
        # The slot of a document known to hold one (the dict's own lookup: it maps postings
        # of thousands of ids to slots).
        self.slot_of_indexed: Callable[[str], int] = self._slot_of.__getitem__
        self._docs: list[IndexDoc | None] = []
        self._free: list[int] = []
        self.order = np.zeros((0, ORDER_COLUMNS), dtype=np.int64)
        self.newest_first = np.zeros(0, dtype=np.int64)
        self.length = np.zeros(0, dtype=np.int64)
        self.superseded = np.zeros(0, dtype=np.bool_)

    def __len__(self) -> int:
        return len(self._slot_of)

    @property
    def size(self) -> int:
        """One more than the highest slot ever held: the length of a per-slot score array."""
        return len(self._docs)

    def slot_of(self, doc_id: str) -> int | None:
        """The slot of an indexed document."""
        return self._slot_of.get(doc_id)

    def get(self, doc_id: str) -> IndexDoc | None:
        """The document with this id, if it holds a slot."""
        slot = self._slot_of.get(doc_id)
        return None if slot is None else self._docs[slot]

    def docs(self) -> Iterator[IndexDoc]:
        """Every document holding a slot, in slot order."""
        return (doc for doc in self._docs if doc is not None)

    def slots_of(self, doc_ids: Iterable[str]) -> list[int | None]:
        """slot_of() of each id, in one pass."""
        return list(map(self._slot_of.get, doc_ids))

    def doc(self, slot: int) -> IndexDoc:
        """The document holding a slot (the slot must be held)."""
        doc = self._docs[slot]
        assert doc is not None, f"slot {slot} is free"
        return doc

    def held(self) -> NDArray[np.intp]:
        """Every held slot, ascending."""
        return np.fromiter(sorted(self._slot_of.values()), dtype=np.intp, count=len(self._slot_of))

    def add(self, doc: IndexDoc) -> int:
        """Give a document (whose id holds no slot) a slot and fill its columns."""
        if self._free:
            slot = self._free.pop()
            self._docs[slot] = doc
        else:
            slot = len(self._docs)
            self._docs.append(doc)
            self._reserve(slot + 1)
        self._slot_of[doc.doc_id] = slot
        self.order[slot] = doc.signal_order()
        self.newest_first[slot] = -doc.time_us
        self.length[slot] = len(doc.terms)
        self.superseded[slot] = doc.signals.superseded
        return slot

    def extend(self, docs: list[IndexDoc]) -> None:
        """add() each of these documents (no two with one id, none holding a slot), with each
        column filled once for all of them instead of once per document (a whole load)."""
        if not docs:
            return
        start = len(self._docs)
        end = start + len(docs)
        self._docs.extend(docs)
        self._reserve(end)
        self._slot_of.update(zip((doc.doc_id for doc in docs), range(start, end), strict=True))
        self.order[start:end] = [doc.signal_order() for doc in docs]
        self.newest_first[start:end] = [-doc.time_us for doc in docs]
        self.length[start:end] = [len(doc.terms) for doc in docs]
        self.superseded[start:end] = [doc.signals.superseded for doc in docs]

    def remove(self, doc_id: str) -> int | None:
        """Free a document's slot; returns it, or None when the id held none."""
        slot = self._slot_of.pop(doc_id, None)
        if slot is not None:
            self._docs[slot] = None
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


def _grown(column: NDArray[Column], capacity: int) -> NDArray[Column]:
    grown = np.zeros((capacity, *column.shape[1:]), dtype=column.dtype)
    grown[: len(column)] = column
    return grown
