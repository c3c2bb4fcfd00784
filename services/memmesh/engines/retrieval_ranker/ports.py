"""The ranker's port: its document store (per-user generations), the source of every rebuild."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from memmesh.engines.retrieval_ranker.domain.documents import IndexDoc


@dataclass(frozen=True)
class StoredDoc:
    """A document as stored: the postings are rebuilt from the payload on load."""

    doc_id: str
    kind: int
    payload: bytes
    # The source's order of the change that wrote it (0: unordered).
    version: int = 0
    # The dense vector derived from it at write time (derived data: b'' means derive again).
    vector: bytes = b""
    # Its index terms as analysed at write time, tagged with the analysis that made them
    # (derived data, like the vector: '' or another analysis's tag means analyse again).
    terms: str = ""


@dataclass(frozen=True)
class Snapshot:
    """Every document of a user and the generation they make up."""

    generation: int
    docs: list[StoredDoc]


@dataclass(frozen=True)
class Changes:
    """What changed after a generation: documents written and ids removed since."""

    generation: int
    upserted: list[StoredDoc]
    removed: list[str]


class RankerStore(Protocol):
    """Per-user documents. Every change raises the user's generation by one, so a process
    holding an index in memory can tell it is behind and catch up (several processes of
    the engine may serve one user)."""

    async def generation(self, tenant_id: str, user_id: str) -> int:
        """The user's current generation; 0 for a user never written."""
        ...

    async def upsert(
        self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]
    ) -> tuple[list[str], int]:
        """Write documents (replacing same ids) atomically; returns the ids written and the
        generation after. A versioned document is skipped when the stored one, the removal
        of its id or the user's forgetting has a higher version (the forgetting: as high)."""
        ...

    async def remove(
        self, tenant_id: str, user_id: str, doc_ids: Sequence[str], version: int = 0
    ) -> tuple[list[str], int]:
        """Delete documents; returns the ids that existed (sorted) and the generation after.
        A versioned removal keeps documents stored with its version or a higher one, and
        remembers the other ids (ids only) with its version so an older upsert stays out."""
        ...

    async def replace_all(
        self,
        tenant_id: str,
        user_id: str,
        docs: Sequence[StoredDoc],
        if_generation: int | None = None,
    ) -> int | None:
        """Replace every document of the user atomically (reindex); returns the new generation,
        or None (and changes nothing) when `if_generation` is given and is no longer current."""
        ...

    async def forget_user(self, tenant_id: str, user_id: str, version: int = 0) -> int:
        """Delete every document of the user and every removal record, as a rebuild to an
        empty index (so every process reloads instead of catching up), and remember the
        version (a number only), so no upsert of that version or an older one comes back;
        the documents removed."""
        ...

    async def reclaim_erased(self) -> bool:
        """Make deleted document bytes unreadable where the store can (best effort)."""
        ...

    async def load(self, tenant_id: str, user_id: str) -> Snapshot:
        """Every document of the user, consistent with the generation returned."""
        ...

    async def changes_since(self, tenant_id: str, user_id: str, generation: int) -> Changes | None:
        """Changes after `generation`, or None when a replace_all happened since (load instead)."""
        ...

    async def close(self) -> None: ...


class DocumentCodec(Protocol):
    """Index documents to stored rows and back (mapping.DocumentCodec)."""

    def encode(self, doc: IndexDoc, version: int = 0) -> StoredDoc:
        """The row of a document, with what was derived from it (vector, terms)."""
        ...

    def decode(self, stored: StoredDoc) -> IndexDoc:
        """The document of a row; what is derived and missing from the row is derived again."""
        ...
