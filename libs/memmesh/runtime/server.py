"""The one server builder every engine uses."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc
from opentelemetry.instrumentation.grpc import aio_server_interceptor

from memmesh.runtime.interceptors import Authenticator, ServerPolicy
from memmesh.runtime.telemetry import tracing_enabled

ServicerT = TypeVar("ServicerT")

log = logging.getLogger("memmesh.server")

SERVER_OPTIONS = [
    # Accept client keepalive pings at the rate engine channels send them.
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    # Bundles are capped at 32 KB; 4 MB leaves room for batch index updates.
    ("grpc.max_receive_message_length", 4 * 1024 * 1024),
    ("grpc.max_send_message_length", 4 * 1024 * 1024),
    # One process per engine and port; never share a port by accident.
    ("grpc.so_reuseport", 0),
]

# Time in-flight RPCs get to finish on SIGTERM before they are cancelled.
GRACE_S = 5.0


@dataclass
class ServiceRegistration(Generic[ServicerT]):
    """A servicer and how to add it: `add(servicer, server)` and its full service name."""

    servicer: ServicerT
    # Generated add_*_to_server functions take the server untyped.
    add: Callable[[ServicerT, Any], None]
    service_name: str


class _PolicyRegistrar:
    """What a generated add_*_to_server function is given instead of the server: the method
    handlers it registers reach the server wrapped in the policy."""

    def __init__(self, server: grpc.aio.Server, policy: ServerPolicy) -> None:
        self._server = server
        self._policy = policy
        self.registered = False

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        # Generated code passes the same handlers to add_registered_method_handlers, where
        # they are wrapped; unwrapped copies must never reach the server.
        return None

    def add_registered_method_handlers(
        self, service_name: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        wrapped = {
            name: self._policy.wrap(f"/{service_name}/{name}", handler)
            for name, handler in handlers.items()
        }
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service_name, wrapped),)
        )
        self._server.add_registered_method_handlers(service_name, wrapped)
        self.registered = True


@dataclass
class EngineServer:
    """A started engine server and its bound port."""

    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    service_names: list[str] = field(default_factory=list)
    # The plaintext health-only server for probes that cannot speak TLS, and its port.
    health_server: grpc.aio.Server | None = None
    health_port: int = 0

    async def stop(self, grace: float | None = GRACE_S) -> None:
        """Report NOT_SERVING, then stop, letting in-flight calls finish within the grace."""
        for name in ["", *self.service_names]:
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace)
        if self.health_server is not None:
            await self.health_server.stop(None)


async def start_server(
    host: str,
    port: int,
    registrations: Sequence[ServiceRegistration[Any]],
    authenticator: Authenticator,
    *,
    credentials: grpc.ServerCredentials | None = None,
    require_peer_certificate: bool = False,
    health_port: int | None = None,
) -> EngineServer:
    """Build, bind and start an aio server with health, reflection and the shared interceptors.

    Port 0 binds a free port; the bound port is returned. With `credentials` the port
    serves TLS only (mTLS when they require client certificates, and then the policy also
    checks each call's peer certificate). `health_port` (0: any free port) adds a
    plaintext server answering grpc.health.v1 only, from the same health state.
    """
    # Span interceptors only when spans are exported: they cost about 0.1 ms a call otherwise wasted.
    # The policy is not an interceptor: it wraps each engine handler once, at registration.
    tracing = [aio_server_interceptor()] if tracing_enabled() else []
    server = grpc.aio.server(interceptors=tracing, options=SERVER_OPTIONS)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    policy = ServerPolicy(authenticator, require_peer_certificate=require_peer_certificate)
    names = []
    for registration in registrations:
        registrar = _PolicyRegistrar(server, policy)
        registration.add(registration.servicer, registrar)
        if not registrar.registered:
            raise RuntimeError(
                f"{registration.service_name}: stubs did not register their methods by name"
            )
        names.append(registration.service_name)
    # Reflection goes through the policy like the engine's services: it needs the same token
    # (the gateway: a tenant key) and, under mTLS, a mesh certificate.
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
        reflection.aio.ReflectionServicer(
            [
                *names,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ]
        ),
        _PolicyRegistrar(server, policy),
    )
    address = f"{host}:{port}"
    if credentials is None:
        bound = server.add_insecure_port(address)
    else:
        bound = server.add_secure_port(address, credentials)
    if bound == 0:
        raise OSError(f"could not bind {address}")
    probes: grpc.aio.Server | None = None
    probe_port = 0
    if health_port is not None:
        probes = grpc.aio.server(options=SERVER_OPTIONS)
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, probes)
        probe_port = probes.add_insecure_port(f"{host}:{health_port}")
        if probe_port == 0:
            raise OSError(f"could not bind the health port {host}:{health_port}")
        await probes.start()
    await server.start()
    for name in ["", *names]:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return EngineServer(
        server=server,
        port=bound,
        health=health_servicer,
        service_names=names,
        health_server=probes,
        health_port=probe_port,
    )


async def serve_until_signal(
    engine: EngineServer,
    on_stop: Callable[[], object] | None = None,
    supervisor_pid: int | None = None,
) -> None:
    """Run until SIGTERM or SIGINT, or until the supervisor that started the engine is gone
    (killed outright, it could not stop its engines), then stop gracefully and clean up."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    watch = (
        asyncio.create_task(_until_orphaned(supervisor_pid, stop))
        if supervisor_pid is not None
        else None
    )
    await stop.wait()
    if watch is not None:
        watch.cancel()
    log.info("stopping")
    await engine.stop()
    if on_stop is not None:
        result = on_stop()
        if asyncio.iscoroutine(result):
            await result


# How often an engine checks that its supervisor still runs.
SUPERVISOR_POLL_S = 1.0


async def _until_orphaned(supervisor_pid: int, stop: asyncio.Event) -> None:
    """Set `stop` once the engine's parent is no longer its supervisor: a dead parent's
    children are handed to another process, so the parent id changes."""
    while os.getppid() == supervisor_pid:
        await asyncio.sleep(SUPERVISOR_POLL_S)
    log.warning("supervisor %d is gone; stopping", supervisor_pid)
    stop.set()
