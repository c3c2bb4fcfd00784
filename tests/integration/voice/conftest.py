"""A real mesh for the voice-framework tests, and what each conversation needs to reach it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from memmesh.client.memory_client import GatewaySettings, MemoryClient
from memmesh.client.session import MemorySession
from memmesh.runtime.supervisor import Mesh, built_engines
from memmesh.voice.turns import VoiceMemory, VoiceMemorySettings

# The per-turn mesh: every engine but device sync.
ENGINES = [name for name in built_engines() if name != "outbox_sync"]
TENANT, TENANT_KEY = "voice", "voice-key"
SECOND_US = 1_000_000
DAY_US = 86_400 * SECOND_US
NOW_US = 1_767_225_600 * SECOND_US
# Behaviour, not latency: generous budgets keep a loaded 2-core machine from turning a slow
# turn into an (expected) turn without memory.
BUDGET_MS = 3000


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    """The per-turn engines as real processes on loopback, on embedded storage."""
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path_factory.mktemp("voice")),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{TENANT_KEY}"}}',
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": str(BUDGET_MS),
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(list(ENGINES), env=env) as running:
        yield running


class SteppingClock:
    """The conversation's clock: one second per reading, moved on by the test."""

    def __init__(self, now_us: int = NOW_US) -> None:
        self.now_us = now_us

    def __call__(self) -> int:
        self.now_us += SECOND_US
        return self.now_us


def new_user_id() -> str:
    """A random user per test, so tests never share memory."""
    return f"u-{uuid.uuid4().hex[:12]}"


def conversation_memory(client: MemoryClient, user_id: str, clock: SteppingClock) -> VoiceMemory:
    """One call's memory, as an application would set it up."""
    session = MemorySession(client, user_id, clock_us=clock)
    settings = VoiceMemorySettings(brief_budget_ms=2 * BUDGET_MS, ingest_budget_ms=2 * BUDGET_MS)
    return VoiceMemory(session, settings)


def gateway_settings(mesh: Mesh) -> GatewaySettings:
    """The SDK's settings for the test tenant."""
    return GatewaySettings(addr=mesh.addrs["gateway"], tenant_key=TENANT_KEY, tenant_id=TENANT)
