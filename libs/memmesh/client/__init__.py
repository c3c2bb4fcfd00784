"""Clients of the gateway: the SDK for voice pipelines (MemoryClient, SyncMemoryClient,
MemorySession) and GatewayClient for tools, benchmarks and tests (never used by an engine)."""

from memmesh.client.budget import BudgetSpent, TurnBudget
from memmesh.client.memory_client import GatewayCallFailed, GatewaySettings, MemoryClient
from memmesh.client.results import BriefResult, CommandResult, IngestResult
from memmesh.client.session import MemorySession, SessionTracker, SessionTurn
from memmesh.client.sync_client import SyncMemoryClient

__all__ = [
    "BriefResult",
    "BudgetSpent",
    "CommandResult",
    "GatewayCallFailed",
    "GatewaySettings",
    "IngestResult",
    "MemoryClient",
    "MemorySession",
    "SessionTracker",
    "SessionTurn",
    "SyncMemoryClient",
    "TurnBudget",
]
