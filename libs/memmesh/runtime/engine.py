"""How an engine process starts: settings, tracing, logging, server, readiness line, signals."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memmesh.runtime.interceptors import Authenticator, InternalTokenAuthenticator
from memmesh.runtime.server import (
    EngineServer,
    ServiceRegistration,
    serve_until_signal,
    start_server,
)
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.telemetry import setup_tracing

# Printed once the server is bound; supervisors and tests read the address from it.
READY_PREFIX = "memmesh-ready"


@dataclass
class BuiltEngine:
    """What an engine's composition root hands to the runtime."""

    registrations: Sequence[ServiceRegistration[Any]]
    authenticator: Authenticator | None = None
    # Closes stores and channels after the server has stopped.
    close: Callable[[], Awaitable[None]] | None = None
    extra: dict[str, object] = field(default_factory=dict)


async def start_engine(
    settings: MeshSettings, build: Callable[[MeshSettings], Awaitable[BuiltEngine]]
) -> tuple[EngineServer, BuiltEngine]:
    """Build an engine and start its server (used by main() and by in-process tests)."""
    built = await build(settings)
    authenticator = built.authenticator or InternalTokenAuthenticator(settings.internal_token)
    server = await start_server(settings.host, settings.port, built.registrations, authenticator)
    return server, built


def run_engine(name: str, build: Callable[[MeshSettings], Awaitable[BuiltEngine]]) -> None:
    """Entry point of an engine process."""
    settings = MeshSettings()
    logging.basicConfig(
        level=settings.log_level,
        stream=sys.stderr,
        format=f"%(asctime)s {name} %(levelname)s %(name)s %(message)s",
    )
    provider = setup_tracing(name, settings.otlp_endpoint)

    async def run() -> None:
        server, built = await start_engine(settings, build)
        print(f"{READY_PREFIX} {name} {settings.host}:{server.port}", flush=True)
        await serve_until_signal(server, built.close)
        if provider is not None:
            provider.shutdown()

    asyncio.run(run())
