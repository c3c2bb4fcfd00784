"""What a caller hears when an engine it calls refuses the input: call_engine passes the
peer's INVALID_ARGUMENT or FAILED_PRECONDITION through with the fields it named, never as
UNAVAILABLE ("try again"); an engine that is down is still UNAVAILABLE."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio

from memmesh.common.v1 import scope_pb2
from memmesh.errors import DependencyFailed
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.runtime.errors import call_engine, to_status
from memmesh.testing.in_process import InProcessMesh, start_in_process

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def mesh(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[InProcessMesh]:
    data_dir: Path = tmp_path_factory.mktemp("peer-refusals")
    running = await start_in_process(["exposure_guard"], data_dir)
    yield running
    await running.stop()


def set_rule(now_seconds: int, target: str = "brother") -> guard_pb.SetRuleRequest:
    request = guard_pb.SetRuleRequest(
        scope=scope_pb2.UserScope(tenant_id="t", user_id="u"),
        rule=guard_pb.Rule(
            kind=guard_pb.RULE_KIND_DO_NOT_MENTION,
            target_type=guard_pb.TARGET_TYPE_TOPIC,
            target=target,
        ),
        reason_code="USER_REQUEST",
    )
    request.now.seconds = now_seconds
    return request


@pytest.mark.parametrize(
    ("request_of", "fields"),
    [
        (lambda: set_rule(2**62), ["now.seconds"]),
        (lambda: set_rule(1_767_225_600, target="bro\x00ther"), ["rule.target"]),
    ],
    ids=["now-out-of-range", "nul-in-target"],
)
async def test_a_peers_invalid_argument_reaches_the_caller_as_such(
    mesh: InProcessMesh, request_of, fields: list[str]
) -> None:  # type: ignore[no-untyped-def]
    guard = guard_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    with pytest.raises(DependencyFailed) as failed:
        await call_engine("exposure_guard", guard.SetRule(request_of()))
    error = failed.value
    assert error.caused_by_input and error.status_name == "INVALID_ARGUMENT"
    assert [v.field for v in error.violations] == fields
    # Answered on by the caller's own server: the same code and fields, no "retry".
    status = to_status(error)
    assert status.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "retry" not in status.details.lower()


async def test_an_engine_that_is_down_is_unavailable(mesh: InProcessMesh) -> None:
    channel = grpc.aio.insecure_channel("127.0.0.1:1")
    guard = guard_grpc.ExposureGuardServiceStub(channel)
    with pytest.raises(DependencyFailed) as failed:
        await call_engine("exposure_guard", guard.SetRule(set_rule(1_767_225_600), timeout=2))
    await channel.close()
    assert not failed.value.caused_by_input
    assert failed.value.status_name == "UNAVAILABLE"
