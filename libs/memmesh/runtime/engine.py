"""How an engine process starts: settings, tracing, logging, server, readiness line, signals."""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import uvloop

from memmesh.runtime import channels, tls
from memmesh.runtime.interceptors import Authenticator, InternalTokenAuthenticator
from memmesh.runtime.metrics import setup_metrics
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
# Exit status of an engine that refuses its configuration (EX_CONFIG in sysexits.h).
EXIT_REFUSED = 78
# The engine that serves tenants' clients: TLS with its public certificate, no client cert.
PUBLIC_ENGINE = "gateway"


class UnsafeConfiguration(Exception):
    """MEMMESH_ENV=production with a development secret, plaintext or an unredacted provider."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("refusing to start with MEMMESH_ENV=production: " + "; ".join(problems))
        self.problems = list(problems)


def production_problems(
    settings: MeshSettings, authenticator: Authenticator | None = None
) -> list[str]:
    """What makes this configuration unfit for production (empty: fit, or not production)."""
    if settings.env != "production":
        return []
    problems: list[str] = []
    authenticator = authenticator or InternalTokenAuthenticator(settings.internal_token)
    development_secrets = getattr(authenticator, "development_secrets", None)
    if callable(development_secrets):
        problems += [f"{found} is configured" for found in development_secrets()]
    if not settings.tls_enabled:
        problems.append(
            "transport is plaintext (set MEMMESH_TLS_DIR or the MEMMESH_TLS_*_FILE paths)"
        )
    otlp = settings.otlp_target
    if otlp is not None and otlp.leaves_the_host_in_plaintext:
        # Spans and metrics carry no words, but tenant ids, pseudonyms and timings are
        # still nobody else's to read on the way.
        problems.append(
            f"telemetry export to {otlp.host} is plaintext (use an https:// endpoint or "
            "MEMMESH_OTLP_CA_FILE, or a collector on loopback)"
        )
    return problems


def refuse_unsafe(settings: MeshSettings, problems: Sequence[str]) -> None:
    """Raise UnsafeConfiguration when production has problems (engines add their own, such
    as a model provider without redaction)."""
    if settings.env == "production" and problems:
        raise UnsafeConfiguration(problems)


def server_security(
    settings: MeshSettings, name: str | None
) -> tuple[grpc.ServerCredentials | None, bool]:
    """The server credentials of engine `name` and whether calls need a mesh certificate."""
    if not settings.tls_enabled:
        return None, False
    if name == PUBLIC_ENGINE:
        # Tenants' clients authenticate with their key; TLS protects the key and the words.
        public = settings.tls_files(tls.GATEWAY_PUBLIC)
        return tls.server_credentials(public, require_client_cert=False), False
    files = settings.tls_files(name or settings.tls_identity)
    return tls.server_credentials(files, require_client_cert=True), True


@dataclass
class BuiltEngine:
    """What an engine's composition root hands to the runtime."""

    registrations: Sequence[ServiceRegistration[Any]]
    authenticator: Authenticator | None = None
    # Closes stores and channels after the server has stopped.
    close: Callable[[], Awaitable[None]] | None = None
    extra: dict[str, object] = field(default_factory=dict)


async def start_engine(
    settings: MeshSettings,
    build: Callable[[MeshSettings], Awaitable[BuiltEngine]],
    name: str | None = None,
) -> tuple[EngineServer, BuiltEngine]:
    """Build an engine and start its server (used by main() and by in-process tests).

    Under MEMMESH_ENV=production an unsafe configuration raises UnsafeConfiguration
    before anything is served."""
    refuse_unsafe(settings, production_problems(settings))
    if name is not None:
        channels.use_identity(name)
    credentials, require_peer = server_security(settings, name)
    built = await build(settings)
    authenticator = built.authenticator or InternalTokenAuthenticator(settings.internal_token)
    try:
        refuse_unsafe(settings, production_problems(settings, authenticator))
    except UnsafeConfiguration:
        if built.close is not None:
            await built.close()
        raise
    server = await start_server(
        settings.host,
        settings.port,
        built.registrations,
        authenticator,
        credentials=credentials,
        require_peer_certificate=require_peer,
        health_port=settings.health_port or None,
    )
    return server, built


GRPC_CORE_LOGGER = "grpc._cython.cygrpc"


def caller_gone_quietly(record: logging.LogRecord) -> bool:
    """Logs gRPC's failure to send an answer to a caller that already left (its deadline
    passed while the answer was being sent: grpc's ExecuteBatchError) as one DEBUG line
    instead of an ERROR with a traceback; every other record passes unchanged."""
    error = record.exc_info[1] if record.exc_info else None
    if type(error).__name__ != "ExecuteBatchError":
        return True
    record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    record.msg, record.args, record.exc_info, record.exc_text = (
        "an answer was not sent: its caller had already left",
        (),
        None,
        None,
    )
    return logging.getLogger(GRPC_CORE_LOGGER).isEnabledFor(logging.DEBUG)


def run_engine(name: str, build: Callable[[MeshSettings], Awaitable[BuiltEngine]]) -> None:
    """Entry point of an engine process."""
    settings = MeshSettings()
    logging.basicConfig(
        level=settings.log_level,
        stream=sys.stderr,
        format=f"%(asctime)s {name} %(levelname)s %(name)s %(message)s",
    )
    # With tracing on, the gRPC server instrumentation warns for every call whose peer gRPC
    # reports as '' (a caller already gone, common under load): hundreds of lines a minute
    # in a loaded engine's log for a span that only lacks the peer's address.
    logging.getLogger("opentelemetry.instrumentation.grpc._server").setLevel(logging.ERROR)
    logging.getLogger(GRPC_CORE_LOGGER).addFilter(caller_gone_quietly)
    provider = setup_tracing(name, settings.otlp_target)
    meters = setup_metrics(name, settings.otlp_target, settings.otlp_metric_interval_ms)

    async def run() -> None:
        server, built = await start_engine(settings, build, name)
        # What the process holds once it serves (modules, models, settings) lives as long as
        # it does: frozen, the collector never walks it again. Unfrozen, the first full
        # collections took 150-240 ms in every engine, enough to fail a Brief closed.
        gc.freeze()
        print(f"{READY_PREFIX} {name} {settings.host}:{server.port}", flush=True)
        await serve_until_signal(server, built.close, settings.supervisor_pid)
        # Flush what is still batched: the last spans and a final metrics export.
        if provider is not None:
            provider.shutdown()
        if meters is not None:
            meters.shutdown()

    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(run())
    except UnsafeConfiguration as refused:
        logging.getLogger("memmesh.engine").critical("%s", refused)
        print(f"{name}: {refused}", file=sys.stderr, flush=True)
        sys.exit(EXIT_REFUSED)
