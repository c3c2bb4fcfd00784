"""The gateway client every multi-process gateway test talks through; each module starts
its own `mesh` fixture with the engines and settings it needs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from memmesh.client.gateway import GatewayClient
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh

INTERNAL_TOKEN = MeshSettings().internal_token


@pytest_asyncio.fixture(loop_scope="module")
async def client(mesh: Mesh) -> AsyncIterator[GatewayClient]:
    async with GatewayClient(
        mesh.addrs["gateway"], "demo-key", internal_token=INTERNAL_TOKEN
    ) as gateway:
        yield gateway
