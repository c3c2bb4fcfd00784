"""Composition root of Current State: settings -> stores, cache, ledger client, outbox -> use
cases -> servicer. The outbox's drainer (work orders' ledger events) runs as long as the server."""

from __future__ import annotations

from memmesh.current_state.v1 import current_state_service_pb2 as pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as pb_grpc
from memmesh.engines.current_state.adapters.ledger_client import GrpcStateLedger
from memmesh.engines.current_state.adapters.sql_store import SqlStateStore
from memmesh.engines.current_state.adapters.work_order_store import (
    WORK_ORDER_EVENT,
    SqlWorkOrderStore,
)
from memmesh.engines.current_state.servicer import CurrentStateServicer
from memmesh.engines.current_state.use_cases import CurrentStateService
from memmesh.engines.current_state.work_orders import WorkOrderService
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.outbox import Outbox
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
    ledger = GrpcStateLedger(ledger_grpc.LedgerServiceStub(ledger_channel))
    work_order_store = SqlWorkOrderStore(store.database)
    outbox = Outbox(store.database, {WORK_ORDER_EVENT: ledger.append_work_order_event})
    service = CurrentStateService(store, ledger, cache, work_order_store)
    work_orders = WorkOrderService(work_order_store, outbox)
    outbox.start()

    async def close() -> None:
        await outbox.stop()
        await ledger_channel.close()
        await cache.close()
        await store.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                CurrentStateServicer(service, work_orders),
                pb_grpc.add_CurrentStateServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("current_state", build)
