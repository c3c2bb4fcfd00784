"""The retrieval index holds copies of archived turns and digests: forgetting a thread
removes them there too, before the archive forgets them (so a retry can still find them),
and restricting turns replaces the copies that tell what the turns said."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.common.v1 import scope_pb2
from memmesh.engines.thread_store.domain.model import Digest, Episode, Turn
from memmesh.engines.thread_store.mapping import turn_message
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of

# RetrievalRanker.Remove takes at most 1,000 ids a call, Upsert 1,000 documents.
REMOVE_BATCH = 1000
UPSERT_BATCH = 1000
RANKER = "retrieval_ranker"


class GrpcDerivedIndex:
    """The DerivedIndex port over the RetrievalRanker's Upsert and Remove."""

    def __init__(self, stub: ranker_grpc.RetrievalRankerServiceStub) -> None:
        self._stub = stub

    async def remove(self, tenant_id: str, user_id: str, doc_ids: Sequence[str]) -> None:
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        for start in range(0, len(doc_ids), REMOVE_BATCH):
            batch = list(doc_ids[start : start + REMOVE_BATCH])
            await call_engine(RANKER, self._stub.Remove(ranker_pb.RemoveRequest(scope=scope, doc_ids=batch)))

    async def upsert(
        self, tenant_id: str, user_id: str, turns: Sequence[Turn], digests: Sequence[Digest | Episode]
    ) -> None:
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        documents = [*map(_turn_document, turns), *map(_digest_document, digests)]
        for start in range(0, len(documents), UPSERT_BATCH):
            batch = documents[start : start + UPSERT_BATCH]
            await call_engine(RANKER, self._stub.Upsert(ranker_pb.UpsertRequest(scope=scope, documents=batch)))


def _turn_document(turn: Turn) -> ranker_pb.Document:
    message = turn_message(turn)
    return ranker_pb.Document(doc_id=turn.turn_id, kind=ranker_pb.DOCUMENT_KIND_TURN, text=turn.text, turn=message, time=message.time)


def _digest_document(digest: Digest | Episode) -> ranker_pb.Document:
    # The ranker's digest form: title, summary and key entities one per line; an episode is
    # filed under its own id and names its thread.
    lines = [line for line in (digest.title, digest.summary, *digest.key_entities) if line]
    episode_id = digest.episode_id if isinstance(digest, Episode) else ""
    document = ranker_pb.Document(
        doc_id=episode_id or digest.thread_id, kind=ranker_pb.DOCUMENT_KIND_DIGEST, text="\n".join(lines),
        evidence_turn_ids=digest.evidence_turn_ids, thread_id=digest.thread_id if episode_id else "",
    )  # fmt: skip
    if digest.update_us:
        document.time.CopyFrom(timestamp_of(digest.update_us))
    return document
