"""Composition root of the AtomExtractor: settings -> store, peers, outbox, extractor -> use cases ->
servicer -> server. The outbox drainer runs as long as the server does."""

from __future__ import annotations

import logging

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.atom_extractor.adapters.device_client import GrpcDevices
from memmesh.engines.atom_extractor.adapters.guard_client import GrpcGuard
from memmesh.engines.atom_extractor.adapters.index_client import GrpcIndex
from memmesh.engines.atom_extractor.adapters.key_shredder import GrpcKeyShredder
from memmesh.engines.atom_extractor.adapters.rules_extractor import DeterministicExtractor
from memmesh.engines.atom_extractor.adapters.semantic_extractor import SemanticExtractor
from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.adapters.state_client import GrpcState
from memmesh.engines.atom_extractor.adapters.thread_client import GrpcThreads
from memmesh.engines.atom_extractor.learning.wiring import capsule_keys, learning_service
from memmesh.engines.atom_extractor.outbox import effect_outbox
from memmesh.engines.atom_extractor.ports import Dependencies, TurnExtractor
from memmesh.engines.atom_extractor.servicer import AtomExtractorServicer
from memmesh.engines.atom_extractor.settings import AtomExtractorSettings
from memmesh.engines.atom_extractor.use_cases import CapsuleService
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.extraction.semantic.provider import ChatCompletionsProvider, ProviderConfig
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.ledger_writer import LedgerWriter
from memmesh.outbox import RetryPolicy
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as sync_grpc
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as index_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

log = logging.getLogger("memmesh.atom_extractor")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AtomExtractorService"].full_name
DEPENDENCIES = (
    "ledger",
    "retrieval_ranker",
    "exposure_guard",
    "current_state",
    "thread_store",
    "outbox_sync",
)


def embedded_extractor(settings: AtomExtractorSettings) -> DeterministicExtractor:
    """The in-process path; the hybrid one loads the encoder and the head now, not on the
    first turn."""
    if settings.embedded == "rules":
        return DeterministicExtractor()
    from memmesh.extraction.learned import default_hybrid_extractor

    hybrid = default_hybrid_extractor()
    return DeterministicExtractor(hybrid.extract, hybrid.forget_cached)


def turn_extractor(settings: AtomExtractorSettings) -> TurnExtractor:
    """The embedded path, or the semantic path falling back to it (seed 004)."""
    if settings.mode == "deterministic_only" or not settings.provider_base_url:
        return embedded_extractor(settings)
    config = ProviderConfig(
        name=settings.provider_name,
        base_url=settings.provider_base_url,
        api_key=settings.provider_api_key,
        models=settings.model_ids(),
        timeout_s=settings.provider_timeout_s,
        retries=settings.provider_retries,
        max_tokens=settings.provider_max_tokens,
        turn_token_budget=settings.provider_turn_token_budget,
        redact=settings.provider_redact,
    )
    return SemanticExtractor(ChatCompletionsProvider(config), embedded_extractor(settings))


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the AtomExtractor from settings."""
    own = AtomExtractorSettings()
    device_sync = (
        own.device_sync
        if own.device_sync is not None
        else "outbox_sync_addr" in settings.model_fields_set
    )
    if not device_sync:
        log.warning("no OutboxSync in this mesh: forgets reach no device's copy")
    channels = {
        name: engine_channel(
            settings.addr_of(name), settings.internal_token, settings.default_call_timeout_s
        )
        for name in DEPENDENCIES
    }
    ledger_stub = ledger_grpc.LedgerServiceStub(channels["ledger"])
    writer = LedgerWriter(ledger_stub)
    learning, learning_store = await learning_service(own, settings, writer)
    # Correction pairs are sealed with the learning capsule's data keys.
    keys = capsule_keys(own, settings, learning_store)
    store = await SqlCapsuleStore.open(settings.storage_url, settings.data_dir, keys)
    dependencies = Dependencies(
        ledger=writer,
        index=GrpcIndex(index_grpc.RetrievalRankerServiceStub(channels["retrieval_ranker"])),
        guard=GrpcGuard(guard_grpc.ExposureGuardServiceStub(channels["exposure_guard"])),
        state=GrpcState(state_grpc.CurrentStateServiceStub(channels["current_state"])),
        threads=GrpcThreads(thread_grpc.ThreadStoreServiceStub(channels["thread_store"])),
        devices=GrpcDevices(sync_grpc.OutboxSyncServiceStub(channels["outbox_sync"]))
        if device_sync
        else None,
        keys=GrpcKeyShredder(ledger_stub, writer.keys),
    )
    policy = RetryPolicy(
        attempt_timeout_s=own.effect_attempt_s,
        initial_backoff_s=own.effect_retry_initial_s,
        max_backoff_s=own.effect_retry_max_s,
        max_attempts=own.effect_max_attempts,
    )
    outbox = effect_outbox(store.database, store, dependencies, policy)
    service = CapsuleService(store, dependencies, turn_extractor(own), outbox)
    outbox.start()

    async def close() -> None:
        await outbox.stop()
        for channel in channels.values():
            await channel.close()
        await store.close()
        await learning_store.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                AtomExtractorServicer(service, learning),
                pb_grpc.add_AtomExtractorServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("atom_extractor", build)
