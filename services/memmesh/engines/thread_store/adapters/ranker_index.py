"""The retrieval index is fed by the ThreadStore's outbox: each write queues, in its own
transaction, what the index must do (index an archived turn, a closed session's digest and
episodes; remove the copies of a forgotten thread or of restricted turns), and the drainer
delivers it to the RetrievalRanker in order, so an index outage never fails a write and
nothing is lost. The ranker builds its documents from the records sent here."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TypeVar

from google.protobuf.message import DecodeError

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.thread_store.domain.model import Digest, Episode
from memmesh.engines.thread_store.domain.summary import index_id, says_something
from memmesh.engines.thread_store.mapping import digest_message, episode_message, turn_message
from memmesh.engines.thread_store.ports import IndexChange
from memmesh.outbox import Effect, EffectRejected, Handler, Outbox, QueuedEffect
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.errors import call_engine
from memmesh.storage.sql import SqlTx

# RetrievalRanker.Remove takes at most 1,000 ids a call, Upsert 1,000 documents. Upserts go
# in smaller batches: the ranker embeds each turn with the sentence encoder (1.5 to 4.5 ms
# a turn by host), and a batch must fit one attempt's deadline (index_attempt_ms, 2 s), or
# every retry would time out alike.
REMOVE_BATCH = 1000
UPSERT_BATCH = 200
RANKER = "retrieval_ranker"
INDEX_UPSERT = "index_upsert"
INDEX_REMOVE = "index_remove"
INDEX_FORGET_USER = "index_forget_user"
# One lane: the ranker sees a user's changes in the order they were written.
RANKER_LANE = RANKER
M = TypeVar("M", ranker_pb.UpsertRequest, ranker_pb.RemoveRequest, ranker_pb.ForgetUserRequest)


def _index_digest(digest: Digest | Episode) -> memory_pb2.Digest:
    if isinstance(digest, Episode):
        return episode_message(digest)
    message = digest_message(digest)
    # Pin and use are resume signals that change without the digest changing: not indexed.
    message.ClearField("pinned")
    message.ClearField("use_count")
    message.ClearField("last_use_time")
    return message


def index_effects(
    tenant_id: str, user_id: str, change: IndexChange, key: str = "", version: int = 0
) -> list[Effect]:
    """The outbox effects of an index change: removals first, then the documents.

    `key` names the change when it happens once (a turn id); otherwise each change is its own.
    `version` orders the change among the user's changes: the ranker never lets a late
    delivery of an older change (a retry, or a call applied after its timeout) overwrite a
    newer one or bring back what a newer one removed."""
    scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
    base = f"index:{key or uuid.uuid4().hex}"
    effects: list[Effect] = []
    if change.forget_user:
        forget = ranker_pb.ForgetUserRequest(scope=scope, version=version)
        effects.append(
            Effect(INDEX_FORGET_USER, forget.SerializeToString(), f"{base}:forget", RANKER_LANE)
        )
    # A digest with nothing to find goes from the index (a version of it that said something
    # may be there) rather than into it.
    digests: list[Digest | Episode] = []
    removed = list(change.removed)
    for digest in change.digests:
        if says_something(digest):
            digests.append(digest)
        else:
            removed.append(index_id(digest))
    removed = list(dict.fromkeys(removed))
    for start in range(0, len(removed), REMOVE_BATCH):
        removal = ranker_pb.RemoveRequest(
            scope=scope,
            doc_ids=removed[start : start + REMOVE_BATCH],
            erase=change.erase,
            version=version,
        )
        effects.append(
            Effect(INDEX_REMOVE, removal.SerializeToString(), f"{base}:remove:{start}", RANKER_LANE)
        )
    documents = [
        *(ranker_pb.Document(turn=turn_message(turn)) for turn in change.turns),
        *(ranker_pb.Document(digest=_index_digest(digest)) for digest in digests),
    ]
    for start in range(0, len(documents), UPSERT_BATCH):
        upsert = ranker_pb.UpsertRequest(
            scope=scope, documents=documents[start : start + UPSERT_BATCH], version=version
        )
        effects.append(
            Effect(INDEX_UPSERT, upsert.SerializeToString(), f"{base}:upsert:{start}", RANKER_LANE)
        )
    return effects


class RankerIndexHandlers:
    """Delivery of the index effects to the RetrievalRanker."""

    def __init__(self, stub: ranker_grpc.RetrievalRankerServiceStub) -> None:
        self._stub = stub

    def by_kind(self) -> dict[str, Handler]:
        return {
            INDEX_UPSERT: self.upsert,
            INDEX_REMOVE: self.remove,
            INDEX_FORGET_USER: self.forget_user,
        }

    async def upsert(self, effect: QueuedEffect, timeout_s: float) -> object:
        request = _decoded(ranker_pb.UpsertRequest, effect)
        return await call_engine(RANKER, self._stub.Upsert(request, timeout=timeout_s))

    async def remove(self, effect: QueuedEffect, timeout_s: float) -> object:
        request = _decoded(ranker_pb.RemoveRequest, effect)
        return await call_engine(RANKER, self._stub.Remove(request, timeout=timeout_s))

    async def forget_user(self, effect: QueuedEffect, timeout_s: float) -> object:
        request = _decoded(ranker_pb.ForgetUserRequest, effect)
        return await call_engine(RANKER, self._stub.ForgetUser(request, timeout=timeout_s))


async def scrub_index_effects(
    tx: SqlTx, who: tuple[str, str], turn_ids: Sequence[str], thread_ids: Sequence[str]
) -> int:
    """Take the documents of these turns and of these threads' digests and episodes out of
    the user's queued and dead upserts; an upsert left empty goes. Erasure calls it in its
    own transaction: the removals it queues there supersede whatever these effects would
    have indexed, so nothing is lost, and no payload keeps the forgotten text. The number
    of effects changed."""
    turns, threads = set(turn_ids), set(thread_ids)
    if not turns and not threads:
        return 0
    changed = 0
    for table in ("outbox_effects", "outbox_dead"):
        rows = await tx.fetchall(
            f"SELECT seq, payload FROM {table} WHERE tenant_id = ? AND user_id = ? AND kind = ?",
            (*who, INDEX_UPSERT),
        )
        for seq, payload in rows:
            try:
                request = ranker_pb.UpsertRequest.FromString(bytes(payload))
            except DecodeError:
                continue
            kept = [d for d in request.documents if not _names(d, turns, threads)]
            if len(kept) == len(request.documents):
                continue
            changed += 1
            if not kept:
                await tx.execute(
                    f"DELETE FROM {table} WHERE tenant_id = ? AND user_id = ? AND seq = ?",
                    (*who, seq),
                )
                continue
            del request.documents[:]
            request.documents.extend(kept)
            await tx.execute(
                f"UPDATE {table} SET payload = ? WHERE tenant_id = ? AND user_id = ? AND seq = ?",
                (request.SerializeToString(), *who, seq),
            )
    return changed


def _names(document: ranker_pb.Document, turns: set[str], threads: set[str]) -> bool:
    if document.HasField("turn"):
        return document.turn.turn_id in turns
    if document.HasField("digest"):
        return document.digest.thread_id in threads
    return False


def _decoded(message: type[M], effect: QueuedEffect) -> M:
    try:
        return message.FromString(effect.payload)
    except DecodeError as error:
        raise EffectRejected(f"undecodable {effect.kind} payload") from error


class OutboxIndexFeed:
    """The IndexFeed port over the outbox: the first attempt of what a write queued."""

    def __init__(self, outbox: Outbox, first_attempt_s: float) -> None:
        self._outbox = outbox
        self._first_attempt_s = first_attempt_s

    async def first_attempt(
        self,
        tenant_id: str,
        user_id: str,
        effects: Sequence[Effect],
        timeout_s: float | None = None,
    ) -> None:
        if effects:
            # What fails stays queued: the drainer delivers it once the ranker answers.
            await self._outbox.enqueue_and_deliver(
                tenant_id, user_id, effects, timeout_s or self._first_attempt_s
            )

    async def settle(self, tenant_id: str, user_id: str, timeout_s: float | None = None) -> int:
        return await self._outbox.deliver_queued(
            tenant_id, user_id, self._first_attempt_s if timeout_s is None else timeout_s
        )
