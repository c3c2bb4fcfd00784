"""A real mesh for the voice-framework tests, and what each conversation needs to reach it."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from memmesh.client.memory_client import GatewaySettings, MemoryClient
from memmesh.client.session import MemorySession
from memmesh.runtime import tls
from memmesh.runtime.supervisor import Mesh, built_engines
from memmesh.voice.prompt import HEADER
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
    """The per-turn engines as real processes on loopback, on embedded storage, over TLS."""
    certificates = tmp_path_factory.mktemp("voice-certs")
    tls.make_certificates(certificates, built_engines())
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path_factory.mktemp("voice")),
        "MEMMESH_TLS_DIR": str(certificates),
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
    """The SDK's settings for the test tenant: TLS with the mesh's CA."""
    return GatewaySettings(
        addr=mesh.addrs["gateway"],
        tenant_key=TENANT_KEY,
        tenant_id=TENANT,
        root_certificates=(Path(mesh.env["MEMMESH_TLS_DIR"]) / "ca.pem").read_bytes(),
    )


# One call through a framework: the user's turns in, the LLM's context (its messages'
# texts) on each turn out.
Call = Callable[[VoiceMemory, list[str]], Awaitable[list[list[str]]]]


def memory_in(context: list[str]) -> str:
    """The memory message of an LLM context ("" when there is none)."""
    return next((text for text in context if text.startswith(HEADER)), "")


async def calls_of_one_user(mesh: Mesh, call: Call, caplog: pytest.LogCaptureFixture) -> None:
    """Three calls of one user: a fact said in the first is in the LLM's context in the
    second, a subject the user asked not to mention is not, and with the gateway stopped
    the third is still answered, without memory, with the reason logged."""
    user_id, clock = new_user_id(), SteppingClock()
    async with MemoryClient(gateway_settings(mesh)) as client:
        first = await call(
            conversation_memory(client, user_id, clock),
            [
                "hi, my sister Sarah lives in Chicago",
                "my brother Kwame is a pilot and his birthday is next week",
                "what should I get my brother for his birthday?",
                "Please stop mentioning my brother.",
                "ok thanks",
            ],
        )
        # Within the call memory names him, so the rule below has something to hide.
        assert "Kwame" in memory_in(first[2])

        clock.now_us += DAY_US
        second = await call(
            conversation_memory(client, user_id, clock),
            ["what should I get my sister for her birthday?", "and my brother?"],
        )
        assert "Sarah" in memory_in(second[0])
        said = "\n".join(text for context in second for text in context)
        assert "Kwame" not in said and "pilot" not in said

        mesh.kill("gateway")
        try:
            clock.now_us += DAY_US
            memory = conversation_memory(client, user_id, clock)
            with caplog.at_level(logging.WARNING, logger="memmesh.voice"):
                third = await call(memory, ["what should I cook tonight?"])
            assert len(third) == 1
            assert "what should I cook tonight?" in third[0]
            assert memory_in(third[0]) == ""
            assert memory.last_brief.reason_code == "UNAVAILABLE"
            assert "memory degraded: UNAVAILABLE" in caplog.text
        finally:
            mesh.start(["gateway"])
