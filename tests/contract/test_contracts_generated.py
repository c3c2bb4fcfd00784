"""Contract tests generated from the proto descriptors: every RPC of every engine the
mesh starts gets a valid call, a call without tenant or user, a malformed id, a call
without credentials and a call with an expired deadline. A new RPC is covered with no edit here."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from requests_from_protos import Rpc, message_class, service_rpcs, valid_request

from memmesh.runtime.errors import details_of
from memmesh.runtime.interceptors import INTERNAL_TOKEN_HEADER
from memmesh.runtime.supervisor import built_engines
from memmesh.testing.in_process import InProcessMesh, start_in_process

pytestmark = pytest.mark.asyncio(loop_scope="module")

ENGINES = built_engines()
RPCS = service_rpcs(ENGINES)
# The gateway's default tenant key, the one `make run` serves.
GATEWAY_TENANT, GATEWAY_KEY = "demo", "demo-key"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def mesh(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[InProcessMesh]:
    running = await start_in_process(ENGINES, tmp_path_factory.mktemp("contract"))
    yield running
    await running.stop()


def _credentials(mesh: InProcessMesh) -> list[tuple[str, str]]:
    return [
        (INTERNAL_TOKEN_HEADER, mesh.settings.internal_token),
        ("authorization", f"Bearer {GATEWAY_KEY}"),
    ]


def _scoped(rpc: Rpc, tenant: str | None = None, user: str | None = None):  # type: ignore[no-untyped-def]
    request = valid_request(rpc)
    token = uuid.uuid4().hex[:10]
    request.scope.tenant_id = GATEWAY_TENANT if tenant is None else tenant
    request.scope.user_id = f"contract-{token}" if user is None else user
    return request


async def _call(mesh: InProcessMesh, rpc: Rpc, request, metadata, timeout: float = 5.0) -> object:  # type: ignore[no-untyped-def]
    channel = mesh.raw_channel(rpc.engine)
    response_class = message_class(rpc.method.output_type)
    if rpc.method.server_streaming:
        call = channel.unary_stream(
            rpc.path,
            request_serializer=type(request).SerializeToString,
            response_deserializer=response_class.FromString,
        )
        return [item async for item in call(request, metadata=metadata, timeout=timeout)]
    call = channel.unary_unary(
        rpc.path,
        request_serializer=type(request).SerializeToString,
        response_deserializer=response_class.FromString,
    )
    return await call(request, metadata=metadata, timeout=timeout)


async def test_every_built_engine_is_covered() -> None:
    assert {rpc.engine for rpc in RPCS} == set(ENGINES)
    assert {"ledger", "current_state"} <= set(ENGINES)


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.id)
async def test_valid_request_succeeds(mesh: InProcessMesh, rpc: Rpc) -> None:
    response = await _call(mesh, rpc, _scoped(rpc), _credentials(mesh))
    assert response is not None


@pytest.mark.parametrize("field", ["tenant_id", "user_id"])
@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.id)
async def test_missing_scope_field_is_invalid_argument_naming_it(
    mesh: InProcessMesh, rpc: Rpc, field: str
) -> None:
    request = _scoped(rpc)
    setattr(request.scope, field, "")
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _call(mesh, rpc, request, _credentials(mesh))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    reason, fields = details_of(raised.value)
    assert reason == "INVALID_FIELD"
    assert f"scope.{field}" in fields


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.id)
async def test_malformed_user_id_is_invalid_argument(mesh: InProcessMesh, rpc: Rpc) -> None:
    request = _scoped(rpc, user="not a valid id/../x")
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _call(mesh, rpc, request, _credentials(mesh))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "scope.user_id" in details_of(raised.value)[1]


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.id)
async def test_call_without_credentials_is_unauthenticated(mesh: InProcessMesh, rpc: Rpc) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _call(mesh, rpc, _scoped(rpc), metadata=[])
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.id)
async def test_call_with_wrong_token_is_unauthenticated(mesh: InProcessMesh, rpc: Rpc) -> None:
    metadata = [(INTERNAL_TOKEN_HEADER, "wrong"), ("authorization", "Bearer wrong")]
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _call(mesh, rpc, _scoped(rpc), metadata=metadata)
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.id)
async def test_expired_deadline_is_deadline_exceeded(mesh: InProcessMesh, rpc: Rpc) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _call(
            mesh, rpc, _scoped(rpc), _credentials(mesh), timeout=-1.0
        )  # a deadline already in the past
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
