"""Use cases of the ranker: keep per-user indexes in step with the store, and answer from them."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from memmesh.engines.retrieval_ranker.domain.dense import QueryVectors, RetrievalMode
from memmesh.engines.retrieval_ranker.domain.documents import Caps, IndexDoc, Retrieval
from memmesh.engines.retrieval_ranker.domain.reach import ConstraintReach
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import IndexSummary, UserIndex, summary_of
from memmesh.engines.retrieval_ranker.ports import DocumentCodec, RankerStore, Snapshot, StoredDoc
from memmesh.errors import Conflict
from memmesh.runtime import deadlines
from memmesh.storage.reclaim import Reclaimer

log = logging.getLogger(__name__)
UserKey = tuple[str, str]
# Rebuilds started over when writes keep landing between the read and the replace.
REINDEX_ATTEMPTS = 5
# The sentence encoder may use this share of a Retrieve's time left (ENCODE_DEFAULT_S
# without an inbound deadline) to decide whether the request touches standing constraints;
# the rest is kept for the retrieval and the answer. Only an encode that would make the
# whole Retrieve late is cut short, so the decision stays the encoder's whenever the
# Retrieve could answer in time at all.
ENCODE_TIME_SHARE = 0.8
ENCODE_DEFAULT_S = 1.0
# Bytes the cached user indexes may hold together (RankerSettings.max_cache_mb).
DEFAULT_CACHE_BYTES = 1024 * 1024 * 1024


class RankerService:
    """The store is the truth; each process keeps a bounded LRU of user indexes and, before
    every read, compares the index's generation with the store's and applies what changed,
    so a write through any process is visible to the next read (read-your-writes)."""

    def __init__(
        self,
        store: RankerStore,
        analyzer: Analyzer,
        codec: DocumentCodec,
        reclaim_wait_s: float | None = None,
        reach: ConstraintReach | None = None,
        mode: RetrievalMode = RetrievalMode.FUSED,
        max_cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        self._store = store
        # FUSED needs an analyzer with an encoder; without one every document and query has
        # no vector and retrieval is BM25 alone whatever the mode.
        self._mode = mode
        # Without an encoder every request touches the standing constraints (reach.py).
        self._reach = reach or ConstraintReach(None)
        # How long an erasure's answer waits for the store to reclaim the deleted bytes
        # (None: until done); the reclaim goes on in the background after that.
        self._reclaimer = Reclaimer(lambda: self._store.reclaim_erased(), reclaim_wait_s)
        self._analyzer = analyzer
        self._codec = codec
        # The cached indexes together stay under this many bytes (UserIndex.approximate_bytes),
        # the least recently used going first; the index just used always stays. Bounded in
        # bytes only: every user of an ongoing conversation asks on each turn, and one pushed
        # out by a count would read their whole index again each time.
        self._max_cache_bytes = max_cache_bytes
        self._indexes: OrderedDict[UserKey, UserIndex] = OrderedDict()
        # Each cached index's bytes as of the last time it was remembered (summing them
        # afresh would walk every cached user's term arrays on every read).
        self._cached_bytes: dict[UserKey, int] = {}
        # Their sum, kept as they change: summed afresh, every read would walk every cached
        # user, a cost that grows with the users a ranker serves.
        self._cached_total = 0
        # One full load per user at a time, shared by every caller waiting for it.
        self._loads: dict[UserKey, asyncio.Future[UserIndex]] = {}
        # The query's sentence vector is computed on this thread while the event loop scores
        # the atoms and digests: the encoder lets go of the interpreter as it runs, so on a
        # second core the two overlap.
        self._query_encoder = ThreadPoolExecutor(1, thread_name_prefix="query-encoder")

    def _remember(self, key: UserKey, index: UserIndex) -> UserIndex:
        self._indexes[key] = index
        self._indexes.move_to_end(key)
        size = index.approximate_bytes()
        self._cached_total += size - self._cached_bytes.get(key, 0)
        self._cached_bytes[key] = size
        while self._cached_total > self._max_cache_bytes and len(self._indexes) > 1:
            evicted, _ = self._indexes.popitem(last=False)
            self._cached_total -= self._cached_bytes.pop(evicted)
        return index

    def _forget_index(self, key: UserKey) -> None:
        self._indexes.pop(key, None)
        self._cached_total -= self._cached_bytes.pop(key, 0)

    async def _current(self, tenant_id: str, user_id: str) -> UserIndex:
        """The user's index, caught up with the store's generation as of this call."""
        key = (tenant_id, user_id)
        while True:
            generation = await self._store.generation(tenant_id, user_id)
            index = self._indexes.get(key)
            if index is not None and index.generation >= generation:
                self._indexes.move_to_end(key)
                return index
            if index is None:
                break
            base = index.generation
            changes = await self._store.changes_since(tenant_id, user_id, base)
            if changes is None:
                break
            if self._indexes.get(key) is index and index.generation == base:
                # Applied without awaiting, so no other coroutine sees half of it.
                for doc_id in changes.removed:
                    index.remove(doc_id)
                for stored in changes.upserted:
                    index.upsert(self._codec.decode(stored))
                index.generation = changes.generation
                return self._remember(key, index)
            # A write moved the index while the changes were read: read them again.
        return await self._loaded(key)

    async def _loaded(self, key: UserKey) -> UserIndex:
        """The user's whole index read from the store. The read runs as its own task,
        shielded from the caller: a caller whose turn deadline ends before a large index is
        read leaves without it (its part of the bundle degrades), but the read goes on and
        the next call finds the index cached, instead of every call starting a read that
        its deadline then cancels."""
        load = self._loads.get(key)
        if load is None:
            load = asyncio.ensure_future(self._load(key))
            self._loads[key] = load
            load.add_done_callback(lambda done: self._load_done(key, done))
        return await asyncio.shield(load)

    def _load_done(self, key: UserKey, done: asyncio.Future[UserIndex]) -> None:
        if self._loads.get(key) is done:
            del self._loads[key]
        if not done.cancelled():
            done.exception()  # retrieved here, so a load nobody waits for any more is not reported as lost

    async def _load(self, key: UserKey) -> UserIndex:
        snapshot = await self._store.load(*key)
        latest = self._indexes.get(key)
        if latest is not None and latest.generation >= snapshot.generation:
            return latest
        # Built in a worker thread: rows whose vectors must be derived again (another
        # encoder's) take the sentence encoder's time, which the event loop must not wait on.
        fresh = await asyncio.to_thread(self._decoded, snapshot)
        latest = self._indexes.get(key)
        if latest is not None and latest.generation >= snapshot.generation:
            return latest  # a write made the user's index meanwhile
        return self._remember(key, fresh)

    def _apply_write(
        self, key: UserKey, generation: int, apply: Callable[[UserIndex], None]
    ) -> None:
        # The cached index follows the write only when it was exactly one generation
        # behind; otherwise the next read catches up from the store.
        index = self._indexes.get(key)
        if index is None and generation == 1:
            # The user's first write: their whole index is what it holds, so it is made
            # here, not read back from the store on the Brief that follows.
            index = UserIndex(0, ())
        if index is not None and index.generation == generation - 1:
            apply(index)
            index.generation = generation
            self._remember(key, index)

    async def upsert(
        self, tenant_id: str, user_id: str, docs: Sequence[IndexDoc], version: int = 0
    ) -> int:
        """Store and index documents; returns how many were written. With a `version` (the
        source's order of the change) a document a newer change wrote or removed, or a user
        forgotten since, stays as it is."""
        written, generation = await self._store.upsert(
            tenant_id, user_id, [self._codec.encode(d, version) for d in docs]
        )
        if not written:
            return 0
        kept = set(written)

        def apply(index: UserIndex) -> None:
            for doc in docs:
                if doc.doc_id in kept:
                    index.upsert(doc)

        self._apply_write((tenant_id, user_id), generation, apply)
        return len(written)

    async def remove(
        self,
        tenant_id: str,
        user_id: str,
        doc_ids: Sequence[str],
        erase: bool = False,
        version: int = 0,
    ) -> int:
        """Delete documents from the store and the index; returns how many existed. With
        `erase` (forgotten content) the store also reclaims the deleted bytes; with a
        `version` a document written by a change of that version or later stays, and the
        ids are remembered (ids only) so an older upsert arriving later stays out."""
        if not doc_ids:
            return 0
        removed, generation = await self._store.remove(tenant_id, user_id, doc_ids, version)

        def apply(index: UserIndex) -> None:
            for doc_id in removed:
                index.remove(doc_id)

        self._apply_write((tenant_id, user_id), generation, apply)
        if erase and removed:
            self._forget_cached()
            await self._reclaimer.reclaimed()
        return len(removed)

    async def close(self) -> None:
        """Let a reclaim pass under way finish."""
        await self._reclaimer.close()
        self._query_encoder.shutdown(wait=True)

    async def forget_user(self, tenant_id: str, user_id: str, version: int = 0) -> int:
        """Delete every document of the user from the store, drop the user's index from
        memory (other processes reload on their next read) and reclaim the deleted bytes;
        returns how many documents there were. With a `version`, no upsert of that version
        or an older one is taken afterwards."""
        count = await self._store.forget_user(tenant_id, user_id, version)
        self._forget_index((tenant_id, user_id))
        self._forget_cached()
        await self._reclaimer.reclaimed()
        return count

    def _forget_cached(self) -> None:
        """After an erasure: no vector of a forgotten text stays in a cache."""
        self._reach.forget_constraints()
        # An encode under way on any thread (a query's, an Upsert's) keeps its vectors out of
        # the cleared cache (Encoder.clear_cache).
        self._analyzer.forget_cached()

    async def retrieve(self, tenant_id: str, user_id: str, query: str, caps: Caps) -> Retrieval:
        """Candidates for the query within caps, from the user's index as of now, with the
        standing constraints the query could touch."""
        index = await self._current(tenant_id, user_id)
        # The names the user's conversations are between say who talks, not what about:
        # "what does Melanie like?" otherwise finds the turns that address Melanie most.
        scored = self._analyzer.without_addressed(query, index.addressee_names())
        terms = self._analyzer.query_terms(scored)
        vector = (
            self._analyzer.query_vectors(scored, self._query_encoder)
            if terms and self._mode != RetrievalMode.BM25
            else QueryVectors()
        )
        standing = index.standing_constraints() if terms else ()
        if not standing:
            return index.retrieve(terms, caps, (), vector, self._mode)
        names_domain = self._analyzer.names_constraint_domain(terms)
        texts = [doc.constraint_text for doc in standing]
        if names_domain or not self._reach.semantic:
            touched = self._reach.touches(query, names_domain, texts)
        else:
            touched = await self._touches_in_time(query, texts)
            # Writes may have landed meanwhile (a forget among them): read the index again.
            index = await self._current(tenant_id, user_id)
        if not touched:
            return index.retrieve(terms, caps, (), vector, self._mode)
        standing = index.standing_constraints()
        if names_domain or self._reach.semantic:
            # A request found to touch the constraints (by its words or by meaning, or pushed
            # them because the encoder could not answer in time; not by the fallback that
            # pushes them to every request when there is no encoder) also looks for their
            # words, so what was said about them (the turn that told of the allergy) can come
            # up: the user's own constraints, not a list of diet words, say what to look for.
            terms = tuple(sorted({*terms, *(term for doc in standing for term in doc.terms)}))
        return index.retrieve(terms, caps, standing, vector, self._mode)

    async def _touches_in_time(self, query: str, texts: Sequence[str]) -> bool:
        """The encoder's verdict, in a worker thread (its arithmetic releases the GIL, so
        other retrievals go on), or True when it cannot answer within its share of the
        call's time: on an overloaded machine the constraints are pushed rather than the
        Brief losing every pulled atom to a late Retrieve (the encoder still caches the
        vector for the next time)."""
        limit = deadlines.outbound_timeout(ENCODE_DEFAULT_S) * ENCODE_TIME_SHARE
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(self._reach.touches, query, False, texts), limit
            )
        except TimeoutError:
            log.info("sentence encoder over its time share; pushing the standing constraints")
            return True

    async def reindex(self, tenant_id: str, user_id: str) -> IndexSummary:
        """Rebuild the user's index from the documents the owners pushed (the store keeps each
        one as sent), deriving every indexed form again; the old index stays if a document
        cannot be rebuilt or the store fails. A write that lands meanwhile makes it start over."""
        for _ in range(REINDEX_ATTEMPTS):
            snapshot = await self._store.load(tenant_id, user_id)
            # Stored vectors and terms are derived data: derived again like every indexed form,
            # in a worker thread (the sentence encoder's time; the event loop goes on).
            docs = await asyncio.to_thread(self._derived_again, snapshot.docs)
            ordered = [docs[doc_id] for doc_id in sorted(docs)]
            # Each document keeps the version its source gave it.
            versions = {stored.doc_id: stored.version for stored in snapshot.docs}
            generation = await self._store.replace_all(
                tenant_id,
                user_id,
                [self._codec.encode(d, versions.get(d.doc_id, 0)) for d in ordered],
                if_generation=snapshot.generation,
            )
            if generation is not None:
                index = self._remember((tenant_id, user_id), UserIndex(generation, ordered))
                return summary_of(index)
        raise Conflict("the index kept changing during the rebuild; try again")

    def _decoded(self, snapshot: Snapshot) -> UserIndex:
        """The user's index of a snapshot (its rows' stored vectors and terms reused)."""
        return UserIndex(
            snapshot.generation, (self._codec.decode(stored) for stored in snapshot.docs)
        )

    def _derived_again(self, stored_docs: Iterable[StoredDoc]) -> dict[str, IndexDoc]:
        derived = (
            self._codec.decode(replace(stored, vector=b"", terms="")) for stored in stored_docs
        )
        return {doc.doc_id: doc for doc in derived}

    async def describe(self, tenant_id: str, user_id: str) -> IndexSummary:
        """Counts and checksum of the user's live index."""
        return summary_of(await self._current(tenant_id, user_id))
