"""Composition root of OutboxSync: settings -> mirror store, ledger writer -> use cases -> servicer."""

from __future__ import annotations

from memmesh.engines.outbox_sync.adapters.sql_store import SqlMirrorStore
from memmesh.engines.outbox_sync.servicer import OutboxSyncServicer
from memmesh.engines.outbox_sync.use_cases import OutboxSyncService
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.ledger_writer import LedgerWriter
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as pb_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["OutboxSyncService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire OutboxSync from settings."""
    store = await SqlMirrorStore.open(settings.storage_url, settings.data_dir)
    ledger_channel = engine_channel(
        settings.addr_of("ledger"), settings.internal_token, settings.default_call_timeout_s
    )
    service = OutboxSyncService(store, LedgerWriter(ledger_grpc.LedgerServiceStub(ledger_channel)))

    async def close() -> None:
        await ledger_channel.close()
        await store.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                OutboxSyncServicer(service),
                pb_grpc.add_OutboxSyncServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("outbox_sync", build)
