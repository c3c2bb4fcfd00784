"""Composition root of Current State: settings -> store, cache, ledger client -> use cases -> servicer."""

from __future__ import annotations

from memmesh.current_state.v1 import current_state_service_pb2 as pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as pb_grpc
from memmesh.engines.current_state.adapters.ledger_client import GrpcStateLedger
from memmesh.engines.current_state.adapters.sql_store import SqlStateStore
from memmesh.engines.current_state.servicer import CurrentStateServicer
from memmesh.engines.current_state.use_cases import CurrentStateService
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.storage.cache import open_cache

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["CurrentStateService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire Current State from settings."""
    store = await SqlStateStore.open(settings.storage_url, settings.data_dir)
    cache = open_cache(settings.redis_url)
    ledger_channel = engine_channel(
        settings.addr_of("ledger"), settings.internal_token, settings.default_call_timeout_s
    )
    service = CurrentStateService(
        store, GrpcStateLedger(ledger_grpc.LedgerServiceStub(ledger_channel)), cache
    )

    async def close() -> None:
        await ledger_channel.close()
        await cache.close()
        await store.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                CurrentStateServicer(service),
                pb_grpc.add_CurrentStateServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("current_state", build)
