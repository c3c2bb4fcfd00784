"""Composition root of the RetrievalRanker: settings -> store -> service -> server."""

from __future__ import annotations

import logging

from memmesh.embedding import Encoder, EncoderUnavailable, default_encoder
from memmesh.embedding.static import default_static_encoder
from memmesh.engines.retrieval_ranker import mapping
from memmesh.engines.retrieval_ranker.adapters.sql_store import SqlRankerStore
from memmesh.engines.retrieval_ranker.domain.dense import RetrievalMode, warm_dense_scan
from memmesh.engines.retrieval_ranker.domain.reach import ConstraintReach
from memmesh.engines.retrieval_ranker.domain.text import Analyzer, TextVectors
from memmesh.engines.retrieval_ranker.servicer import RetrievalRankerServicer
from memmesh.engines.retrieval_ranker.settings import RankerSettings
from memmesh.engines.retrieval_ranker.use_cases import RankerService
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as pb_grpc
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings

# Request vectors the ranker's sentence encoder keeps.
QUERY_VECTORS_CACHED = 512
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RetrievalRankerService"].full_name
log = logging.getLogger(__name__)


def sentence_encoder(enabled: bool) -> Encoder | None:
    """The shared sentence encoder, loaded now (not on a Brief's clock), or None."""
    if not enabled:
        return None
    try:
        encoder = default_encoder()
    except EncoderUnavailable:
        log.warning("sentence encoder unavailable: every request gets the standing constraints")
        return None
    # It encodes requests, which seldom come twice but for a retried Brief (the constraints'
    # vectors are kept by ConstraintReach).
    encoder.limit_cache(QUERY_VECTORS_CACHED)
    return encoder


def text_vectors(mode: RetrievalMode) -> TextVectors | None:
    """The static encoder for dense retrieval (its table distilled now if not cached), or None."""
    if mode is RetrievalMode.BM25:
        return None
    try:
        return default_static_encoder()
    except EncoderUnavailable:
        log.warning("static embedding unavailable: retrieval is BM25 alone")
        return None


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the ranker from settings."""
    own = RankerSettings()
    store = await SqlRankerStore.open(settings.storage_url, settings.data_dir)
    encoder = sentence_encoder(own.sentence_encoder)
    analyzer = Analyzer(text_vectors(own.retrieval_mode), encoder if own.sentence_vectors else None)
    on_sqlite = settings.storage_url == "sqlite"
    reach = ConstraintReach(encoder)
    reach.warm()
    warm_dense_scan()
    service = RankerService(
        store,
        analyzer,
        mapping.DocumentCodec(analyzer),
        reclaim_wait_s=None if on_sqlite else own.reclaim_wait_ms / 1000,
        reach=reach,
        mode=own.retrieval_mode,
        max_cache_bytes=own.max_cache_mb * 1024 * 1024,
    )

    async def close() -> None:
        await service.close()
        await store.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                RetrievalRankerServicer(service, analyzer),
                pb_grpc.add_RetrievalRankerServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("retrieval_ranker", build)
