"""Engines started inside the test's event loop, on free loopback ports."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, start_engine
from memmesh.runtime.server import EngineServer
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import free_ports


@dataclass
class InProcessMesh:
    """Servers of several engines in one process, each on its own port, wired to each other."""

    settings: MeshSettings
    servers: dict[str, tuple[EngineServer, BuiltEngine]] = field(default_factory=dict)
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    def channel(self, engine: str) -> grpc.aio.Channel:
        """A channel to an engine carrying the internal token (what another engine would use)."""
        channel = engine_channel(self.settings.addr_of(engine), self.settings.internal_token)
        self.channels.append(channel)
        return channel

    def raw_channel(self, engine: str) -> grpc.aio.Channel:
        """A channel with no token and no deadline policy (what an outsider would use)."""
        channel = grpc.aio.insecure_channel(self.settings.addr_of(engine))
        self.channels.append(channel)
        return channel

    async def stop(self) -> None:
        for channel in self.channels:
            await channel.close()
        for server, built in self.servers.values():
            await server.stop(grace=None)
            if built.close is not None:
                await built.close()


async def start_in_process(
    engines: list[str], data_dir: Path, **overrides: object
) -> InProcessMesh:
    """Start the engines in this event loop; overrides go to MeshSettings (storage_url, redis_url…)."""
    ports = free_ports(len(engines))
    addrs = {f"{name}_addr": f"127.0.0.1:{port}" for name, port in zip(engines, ports, strict=True)}
    base = MeshSettings(data_dir=data_dir, **addrs, **overrides)  # type: ignore[arg-type]
    mesh = InProcessMesh(settings=base)
    for name in engines:
        module = importlib.import_module(f"memmesh.engines.{name}.main")
        port = int(base.addr_of(name).rsplit(":", 1)[1])
        mesh.servers[name] = await start_engine(
            base.model_copy(update={"port": port}), module.build
        )
    return mesh
