"""Composition root of the Ledger engine: settings -> store -> use cases -> servicer -> server."""

from __future__ import annotations

from memmesh.engines.ledger.adapters.sql_store import SqlLedgerStore, migrations
from memmesh.engines.ledger.servicer import LedgerServicer
from memmesh.engines.ledger.use_cases import LedgerUseCases
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.storage.sql import open_database

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["LedgerService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the ledger engine from settings."""
    store = SqlLedgerStore(
        await open_database(settings.storage_url, "ledger", migrations, settings.data_dir)
    )
    servicer = LedgerServicer(LedgerUseCases(store))
    return BuiltEngine(
        registrations=[
            ServiceRegistration(servicer, pb_grpc.add_LedgerServiceServicer_to_server, SERVICE_NAME)
        ],
        close=store.close,
    )


def main() -> None:
    run_engine("ledger", build)
