"""A Brief whose request the ContextComposer refuses answers with that refusal (its code and
the field it named), never with an empty bundle marked TIER1_UNAVAILABLE: the caller must
fix the request, not retry it or read the empty bundle as "nothing remembered". The mesh
here runs its composer with a narrower clock window than the gateway's, so a `now` the
gateway lets through is one the composer refuses; a sound `now` still gets its bundle."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from memmesh.client.gateway import GatewayClient
from memmesh.runtime.errors import field_violations_of
from memmesh.runtime.supervisor import Mesh

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "thread_store",
    "context_composer",
    "gateway",
]
# The composer accepts a `now` at most a day old; the gateway keeps its ten years.
COMPOSER_PAST_S = 86_400

pytestmark = pytest.mark.asyncio(loop_scope="module")


class NarrowComposerMesh(Mesh):
    """The mesh, with the composer's clock window narrowed."""

    def environment(self, name: str) -> dict[str, str]:
        env = super().environment(name)
        if name == "context_composer":
            env["MEMMESH_CLOCK_SKEW_PAST_S"] = str(COMPOSER_PAST_S)
        return env


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    data_dir: Path = tmp_path_factory.mktemp("gateway-brief-refusals")
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "2000",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with NarrowComposerMesh(ENGINES, env=env) as running:
        yield running


def user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


async def test_a_now_the_composer_refuses_is_invalid_argument_naming_it(
    client: GatewayClient,
) -> None:
    user_id = user()
    week_ago_us = int((time.time() - 7 * 86_400) * 1_000_000)
    await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", week_ago_us)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.brief(user_id, "s1", week_ago_us + 1_000_000, "what is my sister called?")
    error = refused.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert [field for field, _ in field_violations_of(error)] == ["now"]
    assert "retry" not in (error.details() or "").lower()


async def test_a_sound_now_still_gets_its_bundle(client: GatewayClient) -> None:
    user_id = user()
    now_us = int(time.time() * 1_000_000)
    await client.ingest(user_id, "s1", "t1", "user", "I have a sister named Sarah.", now_us)
    response = await client.brief(user_id, "s1", now_us + 1_000_000, "what is my sister called?")
    assert not response.reason_code.startswith("TIER1_UNAVAILABLE"), response.reason_code
    assert [t.turn_id for t in response.bundle.working_memory] == ["t1"]
