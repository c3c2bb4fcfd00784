"""Composition root of the ExposureGuard: settings -> store, cache, ledger port -> service -> server."""

from __future__ import annotations

from memmesh.engines.exposure_guard.adapters.ledger_client import GrpcRuleLedger
from memmesh.engines.exposure_guard.adapters.sql_store import SqlRuleStore
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

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ExposureGuardService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the ExposureGuard from settings."""
    own = ExposureGuardSettings()
    store = await SqlRuleStore.open(settings.storage_url, settings.data_dir)
    cache = open_cache(settings.redis_url)
    ledger_channel = engine_channel(
        settings.addr_of("ledger"), settings.internal_token, settings.default_call_timeout_s
    )
    service = ExposureGuardService(
        store,
        GrpcRuleLedger(ledger_grpc.LedgerServiceStub(ledger_channel)),
        cache,
        cache_ttl_s=own.rules_cache_ttl_s,
        compiled_entries=own.compiled_cache_entries,
    )

    async def close() -> None:
        await ledger_channel.close()
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
