"""Composition root of the Ledger engine: settings -> store -> servicer -> server."""

from __future__ import annotations

from memmesh.engines.ledger.servicer import LedgerServicer
from memmesh.engines.ledger.store import open_ledger_store
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["LedgerService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the ledger engine from settings."""
    store = await open_ledger_store(settings)
    servicer = LedgerServicer(store)
    return BuiltEngine(
        registrations=[ServiceRegistration(servicer, pb_grpc.add_LedgerServiceServicer_to_server, SERVICE_NAME)],
        close=store.close,
    )


def main() -> None:
    run_engine("ledger", build)
