"""Bad input is refused at the edge (real engine processes behind the gateway): each probe
that once disarmed a user's privacy or crashed an engine (now.seconds = 2**62, year 0,
nanos 2e9, NUL in an id or in text, invalid UTF-8, a newline in the tenant id, a turn dated
9999) gets INVALID_ARGUMENT naming the field; nothing is queued, and the user's earlier
memory and rules are intact afterwards and still enforced."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import pytest_asyncio
from acceptance_mesh import (
    BRIEF_BUDGET_MS,
    ENGINES,
    INTERNAL_TOKEN,
    TENANT,
    TENANT_KEY,
    User,
    new_user_id,
)

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.errors import details_of
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of
from memmesh.runtime.validation import MIN_TIMESTAMP_SECONDS

pytestmark = pytest.mark.asyncio(loop_scope="module")

SECOND_US = 1_000_000
# The server checks `now` against its own clock: these tests speak in wall-clock time.
START_US = int(time.time()) * SECOND_US
SERVICE = pb.DESCRIPTOR.services_by_name["GatewayService"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("privacy-edge")


@pytest.fixture(scope="module")
def mesh(data_dir: Path) -> Iterator[Mesh]:
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{TENANT_KEY}"}}',
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": str(BRIEF_BUDGET_MS),
        "MEMMESH_GATEWAY_RETRY_INITIAL_S": "0.1",
        "MEMMESH_GATEWAY_RETRY_MAX_S": "0.5",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(list(ENGINES), env=env) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def gateway(mesh: Mesh) -> AsyncIterator[GatewayClient]:
    async with GatewayClient(
        mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT, internal_token=INTERNAL_TOKEN
    ) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def channel(mesh: Mesh) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(mesh.addrs["gateway"]) as opened:
        yield opened


METADATA = [("authorization", f"Bearer {TENANT_KEY}"), ("x-internal-token", INTERNAL_TOKEN)]


async def send(channel: grpc.aio.Channel, method: str, request: bytes) -> Any:
    """The request's bytes, sent as they are."""
    output = SERVICE.methods_by_name[method].output_type._concrete_class
    call = channel.unary_unary(
        f"/{SERVICE.full_name}/{method}",
        request_serializer=lambda data: data,
        response_deserializer=output.FromString,
    )
    return await call(request, metadata=METADATA, timeout=10)


async def refused(channel: grpc.aio.Channel, method: str, request: bytes) -> list[str]:
    """The fields named by the INVALID_ARGUMENT the request must get."""
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await send(channel, method, request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, error.value.details()
    return details_of(error.value)[1]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def user(mesh: Mesh, gateway: GatewayClient, data_dir: Path) -> User:
    """A user with a remembered sister and a DO_NOT_MENTION rule on the brother."""
    someone = User(mesh, gateway, user_id=new_user_id())
    await someone.say("I have a sister named Sarah.", START_US)
    await someone.say("My brother is called Kwame.", START_US + SECOND_US)
    await gateway.command(
        someone.user_id, "s1", "DO_NOT_MENTION", START_US + 2 * SECOND_US, "brother"
    )
    await settled(data_dir, someone.user_id)
    RULES_BEFORE[someone.user_id] = await rules(mesh, someone.user_id)
    assert "brother" in [target for _, target in RULES_BEFORE[someone.user_id]]
    return someone


# The seeded user's rules once the command was applied (one rule per covered subject).
RULES_BEFORE: dict[str, list[tuple[int, str]]] = {}


async def settled(data_dir: Path, user_id: str) -> None:
    """Wait until the gateway holds no queued or dead effect of the user."""
    for _ in range(100):
        if queued(data_dir, user_id) == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"effects of {user_id} still queued")


def queued(data_dir: Path, user_id: str) -> int:
    """Effects the gateway's outbox holds for the user, queued or dead."""
    uri = f"file:{data_dir / 'gateway.sqlite3'}?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        count = 0
        for table in ("outbox_effects", "outbox_dead"):
            row = db.execute(
                f"SELECT COUNT(*) FROM {table} WHERE tenant_id = ? AND user_id = ?",  # noqa: S608
                (TENANT, user_id),
            ).fetchone()
            count += int(row[0])
    return count


async def rules(mesh: Mesh, user_id: str) -> list[tuple[int, str]]:
    async with engine_channel(mesh.addrs["exposure_guard"], INTERNAL_TOKEN, 5.0) as guard:
        reply = await guard_grpc.ExposureGuardServiceStub(guard).ListRules(
            guard_pb.ListRulesRequest(scope=scope_pb2.UserScope(tenant_id=TENANT, user_id=user_id))
        )
    return [(rule.kind, rule.target) for rule in reply.rules]


async def intact(mesh: Mesh, gateway: GatewayClient, user: User, data_dir: Path) -> None:
    """The user's memory and rules as before the probe, nothing queued, and still enforced."""
    assert queued(data_dir, user.user_id) == 0
    atoms = await user.atoms()
    assert any("Sarah" in atom.text for atom in atoms), [a.text for a in atoms]
    assert await rules(mesh, user.user_id) == RULES_BEFORE[user.user_id]
    response = await user.brief("what is my sister called?", START_US + 10 * SECOND_US)
    texts = [atom.text for atom in response.bundle.atoms]
    assert any("Sarah" in text for text in texts), texts
    assert not any("Kwame" in text for text in texts), texts


def command(user: User, **fields: Any) -> pb.CommandRequest:
    request = pb.CommandRequest(
        scope=user.scope,
        command=pb.USER_COMMAND_DO_NOT_MENTION,
        target="sister",
        session_id="s1",
        now=timestamp_of(START_US + 5 * SECOND_US),
    )
    for name, value in fields.items():
        setattr(request, name, value)
    return request


def brief(user: User) -> pb.BriefRequest:
    return pb.BriefRequest(
        scope=user.scope,
        session_id="s1",
        now=timestamp_of(START_US + 5 * SECOND_US),
        query="what is my sister called?",
        channel=memory_pb2.CHANNEL_VOICE,
        identity_verified=True,
    )


def ingest(user: User, text: str = "Actually my sister is called Sarah Jane.") -> pb.IngestRequest:
    return pb.IngestRequest(
        scope=user.scope,
        turn=memory_pb2.Turn(
            turn_id="probe-turn",
            session_id="s1",
            role=memory_pb2.ROLE_USER,
            text=text,
            time=timestamp_of(START_US + 5 * SECOND_US),
        ),
    )


def probe_now_in_microseconds(user: User) -> tuple[str, bytes]:
    request = command(user)
    request.now.seconds = 2**62  # a client putting microseconds (and more) into seconds
    return "Command", request.SerializeToString()


def probe_year_zero(user: User) -> tuple[str, bytes]:
    request = command(user, command=pb.USER_COMMAND_FORGET)
    request.now.seconds = MIN_TIMESTAMP_SECONDS - 86_400
    return "Command", request.SerializeToString()


def probe_nanos_two_billion(user: User) -> tuple[str, bytes]:
    request = brief(user)
    request.now.nanos = 2_000_000_000
    return "Brief", request.SerializeToString()


def probe_nul_in_user_id(user: User) -> tuple[str, bytes]:
    request = ingest(user)
    request.scope.user_id = f"{user.user_id}\x00"
    return "Ingest", request.SerializeToString()


def probe_nul_in_text(user: User) -> tuple[str, bytes]:
    return "Ingest", ingest(user, "my sister\x00 is called Sarah Jane").SerializeToString()


def probe_invalid_utf8(user: User) -> tuple[str, bytes]:
    data = command(user, target="XXXXXX").SerializeToString()
    return "Command", data.replace(b"XXXXXX", b"si\xffst\xc3r")


def probe_newline_in_tenant(user: User) -> tuple[str, bytes]:
    request = command(user)
    request.scope.tenant_id = f"{TENANT}\nrpc method=/forged code=OK"
    return "Command", request.SerializeToString()


def probe_turn_dated_9999(user: User) -> tuple[str, bytes]:
    request = ingest(user)
    request.turn.time.seconds = 253_402_300_000
    return "Ingest", request.SerializeToString()


PROBES: list[tuple[Callable[[User], tuple[str, bytes]], list[str]]] = [
    (probe_now_in_microseconds, ["now.seconds"]),
    (probe_year_zero, ["now.seconds"]),
    (probe_nanos_two_billion, ["now.nanos"]),
    (probe_nul_in_user_id, ["scope.user_id"]),
    (probe_nul_in_text, ["turn.text"]),
    (probe_invalid_utf8, ["target"]),
    (probe_newline_in_tenant, ["scope.tenant_id"]),
    (probe_turn_dated_9999, ["turn.time"]),
]


@pytest.mark.parametrize(("probe", "fields"), PROBES, ids=[p.__name__ for p, _ in PROBES])
async def test_probe_is_invalid_argument_naming_the_field_and_leaves_the_user_intact(
    mesh: Mesh,
    gateway: GatewayClient,
    channel: grpc.aio.Channel,
    user: User,
    data_dir: Path,
    probe: Callable[[User], tuple[str, bytes]],
    fields: list[str],
) -> None:
    method, data = probe(user)
    assert await refused(channel, method, data) == fields
    await intact(mesh, gateway, user, data_dir)


async def test_do_not_mention_with_a_bad_now_is_refused_before_anything_is_queued(
    mesh: Mesh, gateway: GatewayClient, channel: grpc.aio.Channel, data_dir: Path
) -> None:
    someone = User(mesh, gateway, user_id=new_user_id())
    await someone.say("My brother is called Kwame.", START_US)
    await settled(data_dir, someone.user_id)
    method, data = probe_now_in_microseconds(someone)
    assert await refused(channel, method, data) == ["now.seconds"]
    assert queued(data_dir, someone.user_id) == 0
    assert await rules(mesh, someone.user_id) == []
    # The user's next rule is not stuck behind anything: it is in force at once.
    await gateway.command(someone.user_id, "s1", "DO_NOT_MENTION", START_US + SECOND_US, "brother")
    assert "brother" in [target for _, target in await rules(mesh, someone.user_id)]
    response = await someone.brief("tell me about my brother", START_US + 2 * SECOND_US)
    assert not any("Kwame" in atom.text for atom in response.bundle.atoms)


async def test_a_peer_refusing_the_input_is_not_reported_as_unavailable(
    mesh: Mesh, user: User
) -> None:
    # An engine behind the gateway applies the same rules: a bad `now` sent to it directly
    # is INVALID_ARGUMENT with its field, so a caller relaying it never reads "retry".
    async with engine_channel(mesh.addrs["exposure_guard"], INTERNAL_TOKEN, 5.0) as guard:
        request = guard_pb.SetRuleRequest(scope=user.scope)
        request.now.seconds = 2**62
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await guard_grpc.ExposureGuardServiceStub(guard).SetRule(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "now.seconds" in details_of(error.value)[1]
