"""Fakes of the ranker's ports and builders of documents, for unit tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memmesh.common.v1 import memory_pb2
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.domain.documents import IndexDoc
from memmesh.engines.retrieval_ranker.domain.reach import ConstraintReach
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.ports import Changes, Snapshot, StoredDoc
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb
from memmesh.runtime.timeconv import timestamp_of

TENANT, USER = "tenant-a", "user-1"
ANALYZER = Analyzer()


@dataclass
class _UserDocs:
    generation: int = 0
    rebuilt: int = 0
    forgotten_version: int = 0
    docs: dict[str, tuple[StoredDoc, int]] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    removed_versions: dict[str, int] = field(default_factory=dict)


class MemoryRankerStore:
    """The RankerStore port in memory, with the same generation and version rules as the
    real stores."""

    def __init__(self) -> None:
        self.users: dict[tuple[str, str], _UserDocs] = {}

    def _user(self, tenant_id: str, user_id: str) -> _UserDocs:
        return self.users.setdefault((tenant_id, user_id), _UserDocs())

    async def generation(self, tenant_id: str, user_id: str) -> int:
        return self._user(tenant_id, user_id).generation

    def _admitted(self, user: _UserDocs, doc: StoredDoc) -> bool:
        version = doc.version
        if version == 0:
            return True
        stored = user.docs.get(doc.doc_id)
        return (
            version > user.forgotten_version
            and version >= (stored[0].version if stored else 0)
            and version >= user.removed_versions.get(doc.doc_id, 0)
        )

    async def upsert(
        self, tenant_id: str, user_id: str, docs: Sequence[StoredDoc]
    ) -> tuple[list[str], int]:
        user = self._user(tenant_id, user_id)
        admitted = [doc for doc in docs if self._admitted(user, doc)]
        if not admitted:
            return [], user.generation
        user.generation += 1
        for doc in admitted:
            user.docs[doc.doc_id] = (doc, user.generation)
            user.removed.pop(doc.doc_id, None)
        return [doc.doc_id for doc in admitted], user.generation

    async def remove(
        self, tenant_id: str, user_id: str, doc_ids: Sequence[str], version: int = 0
    ) -> tuple[list[str], int]:
        user = self._user(tenant_id, user_id)
        user.generation += 1
        removed = sorted(
            {
                d
                for d in doc_ids
                if d in user.docs and (version == 0 or user.docs[d][0].version < version)
            }
        )
        for doc_id in removed:
            del user.docs[doc_id]
            user.removed[doc_id] = user.generation
        if version > 0:
            for doc_id in doc_ids:
                if doc_id not in user.docs:
                    known = user.removed_versions.get(doc_id, 0)
                    user.removed_versions[doc_id] = max(known, version)
        return removed, user.generation

    async def replace_all(
        self,
        tenant_id: str,
        user_id: str,
        docs: Sequence[StoredDoc],
        if_generation: int | None = None,
    ) -> int | None:
        user = self._user(tenant_id, user_id)
        if if_generation is not None and user.generation != if_generation:
            return None
        user.generation += 1
        user.rebuilt = user.generation
        user.docs = {doc.doc_id: (doc, user.generation) for doc in docs}
        user.removed = {}
        return user.generation

    async def forget_user(self, tenant_id: str, user_id: str, version: int = 0) -> int:
        """Every document of the user gone, as a rebuild (no change list reaches back past it)."""
        user = self._user(tenant_id, user_id)
        user.forgotten_version = max(user.forgotten_version, version)
        count = len(user.docs)
        user.generation += 1
        user.rebuilt = user.generation
        user.docs, user.removed = {}, {}
        return count

    async def load(self, tenant_id: str, user_id: str) -> Snapshot:
        user = self._user(tenant_id, user_id)
        return Snapshot(user.generation, [doc for _, (doc, _) in sorted(user.docs.items())])

    async def changes_since(self, tenant_id: str, user_id: str, generation: int) -> Changes | None:
        user = self._user(tenant_id, user_id)
        if user.rebuilt > generation:
            return None
        upserted = [doc for _, (doc, g) in sorted(user.docs.items()) if g > generation]
        removed = sorted(d for d, g in user.removed.items() if g > generation)
        return Changes(user.generation, upserted, removed)

    async def close(self) -> None:
        return None


def atom(atom_id: str, text: str, key: str = "", **fields: object) -> memory_pb2.Atom:
    """An active atom with the given fields (times as microseconds)."""
    times = {
        name: timestamp_of(int(fields.pop(name)))
        for name in ("last_use_time", "create_time")
        if name in fields
    }
    fields.setdefault("status", memory_pb2.ATOM_STATUS_ACTIVE)
    return memory_pb2.Atom(atom_id=atom_id, key=key, text=text, **times, **fields)  # type: ignore[arg-type]


def turn(turn_id: str, text: str, time_us: int, session_id: str = "s1") -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn_id,
        session_id=session_id,
        role=memory_pb2.ROLE_USER,
        text=text,
        time=timestamp_of(time_us),
    )


def digest(
    thread_id: str, title: str, summary: str, time_us: int, evidence: Sequence[str] = ()
) -> memory_pb2.Digest:
    return memory_pb2.Digest(
        thread_id=thread_id,
        title=title,
        summary=summary,
        evidence_turn_ids=evidence,
        update_time=timestamp_of(time_us),
    )


def atom_doc(a: memory_pb2.Atom) -> IndexDoc:
    return mapping.index_doc(pb.Document(atom=a), ANALYZER)


def turn_doc(t: memory_pb2.Turn) -> IndexDoc:
    return mapping.index_doc(pb.Document(turn=t), ANALYZER)


def digest_doc(d: memory_pb2.Digest) -> IndexDoc:
    return mapping.index_doc(pb.Document(digest=d), ANALYZER)


def new_service(
    store: object | None = None,
    max_cache_bytes: int = 1 << 30,
    reach: ConstraintReach | None = None,
) -> RankerService:
    """A service over an in-memory store (or the given one); without `reach`, no encoder."""
    return RankerService(
        store or MemoryRankerStore(),  # type: ignore[arg-type]
        ANALYZER,
        mapping.DocumentCodec(ANALYZER),
        reach=reach,
        max_cache_bytes=max_cache_bytes,
    )
