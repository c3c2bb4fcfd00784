"""Composition root of the ExposureGuard: settings -> store, cache, ledger and subject ports ->
service -> server."""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.engines.exposure_guard.adapters.atom_extractor import GrpcSubjectAtoms
from memmesh.engines.exposure_guard.adapters.ledger_client import GrpcRuleLedger
from memmesh.engines.exposure_guard.adapters.sql_store import SqlRuleStore
from memmesh.engines.exposure_guard.adapters.thread_store import GrpcSubjectGraph
from memmesh.engines.exposure_guard.servicer import ExposureGuardServicer
from memmesh.engines.exposure_guard.settings import ExposureGuardSettings
from memmesh.engines.exposure_guard.use_cases import ExposureGuardService
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as pb_grpc
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.storage.cache import open_cache
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ExposureGuardService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the ExposureGuard from settings."""
    own = ExposureGuardSettings()
    store = await SqlRuleStore.open(settings.storage_url, settings.data_dir)
    cache = open_cache(settings.redis_url)
    channels = {
        name: engine_channel(
            settings.addr_of(name), settings.internal_token, settings.default_call_timeout_s
        )
        for name in ("ledger", "atom_extractor", "thread_store")
    }
    service = ExposureGuardService(
        store,
        GrpcRuleLedger(ledger_grpc.LedgerServiceStub(channels["ledger"])),
        cache,
        cache_ttl_s=own.rules_cache_ttl_s,
        compiled_entries=own.compiled_cache_entries,
        atoms=GrpcSubjectAtoms(extractor_grpc.AtomExtractorServiceStub(channels["atom_extractor"])),
        graph=GrpcSubjectGraph(thread_grpc.ThreadStoreServiceStub(channels["thread_store"])),
    )

    async def close() -> None:
        for channel in channels.values():
            await channel.close()
        await cache.close()
        await store.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                ExposureGuardServicer(service),
                pb_grpc.add_ExposureGuardServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("exposure_guard", build)
