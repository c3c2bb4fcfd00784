"""Composition root of the ThreadStore: settings -> store, session buffer, index outbox ->
service -> server. The outbox drainer runs as long as the server does."""

from __future__ import annotations

from memmesh.engines.thread_store.adapters.ranker_index import OutboxIndexFeed, RankerIndexHandlers
from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.adapters.turn_buffer import open_turn_buffer
from memmesh.engines.thread_store.observing import Observing
from memmesh.engines.thread_store.servicer import ThreadStoreServicer
from memmesh.engines.thread_store.settings import ThreadStoreSettings
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.observation import ObservationSettings
from memmesh.outbox import Outbox, RetryPolicy
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.storage.sql import Dialect, open_database
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ThreadStoreService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the ThreadStore from settings."""
    own = ThreadStoreSettings()
    database = await open_database(
        settings.storage_url, "thread_store", migrations, settings.data_dir
    )
    store = SqlThreadStore(database)
    buffer = open_turn_buffer(settings.redis_url, own.buffer_ttl_s)
    ranker_channel = engine_channel(
        settings.addr_of("retrieval_ranker"),
        settings.internal_token,
        settings.default_call_timeout_s,
    )
    policy = RetryPolicy(
        attempt_timeout_s=own.index_attempt_ms / 1000,
        max_backoff_s=own.index_retry_max_s,
        max_attempts=own.index_max_attempts,
    )
    outbox = Outbox(
        database,
        RankerIndexHandlers(ranker_grpc.RetrievalRankerServiceStub(ranker_channel)).by_kind(),
        policy,
    )
    outbox.start()
    index = OutboxIndexFeed(outbox, own.index_first_attempt_ms / 1000)
    service = ThreadStoreUseCases(
        store,
        buffer,
        own.session_gap_s * 1_000_000,
        own.working_memory_turns,
        index,
        erasure_attempt_s=own.index_erasure_attempt_ms / 1000,
        reclaim_wait_s=(None if database.dialect == Dialect.SQLITE else own.reclaim_wait_ms / 1000),
        observing=Observing(store, ObservationSettings()),
        retention=own.thread_retention_us,
        kept_resume_users=own.resume_kept_users,
    )

    async def close() -> None:
        await service.close()
        await outbox.stop()
        await ranker_channel.close()
        if buffer is not None:
            await buffer.close()
        await store.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                ThreadStoreServicer(service),
                pb_grpc.add_ThreadStoreServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("thread_store", build)
