"""ExposureGuard.ForgetUser over gRPC with a real Ledger, capsule and graph, on SQLite and on
PostgreSQL + Redis: the user's rules, their subject terms and their cached copy are gone
from every byte the guard wrote, and another user's rules stay."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import psycopg
import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp
from redis import asyncio as aioredis

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as pb_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.testing.in_process import InProcessMesh, start_in_process

NOW = Timestamp(seconds=1_767_225_600)
ENGINES = ["ledger", "exposure_guard", "atom_extractor", "thread_store"]


@pytest_asyncio.fixture(params=["sqlite", "postgres+redis"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    if request.param == "sqlite":
        running = await start_in_process(ENGINES, tmp_path)
    else:
        running = await start_in_process(
            ENGINES,
            tmp_path,
            storage_url=request.getfixturevalue("postgres_url"),
            redis_url=request.getfixturevalue("redis_url"),
        )
    yield running
    await running.stop()


def new_user() -> scope_pb2.UserScope:
    return scope_pb2.UserScope(tenant_id="it", user_id=f"u-{uuid.uuid4().hex[:12]}")


def unique_name() -> str:
    """A made-up given name no other test writes, so finding it means this test wrote it."""
    letters = "".join(chr(ord("a") + int(c, 16) % 26) for c in uuid.uuid4().hex[:6])
    return "Zo" + letters


async def say(mesh: InProcessMesh, scope: scope_pb2.UserScope, text: str) -> None:
    turn = memory_pb2.Turn(
        turn_id=f"t-{uuid.uuid4().hex[:8]}",
        session_id="s1",
        role=memory_pb2.ROLE_USER,
        text=text,
        time=NOW,
    )
    stub = extractor_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    await stub.Process(extractor_pb.ProcessRequest(scope=scope, turn=turn, now=NOW))


def dnm(target_type: int, target: str) -> pb.Rule:
    return pb.Rule(kind=pb.RULE_KIND_DO_NOT_MENTION, target_type=target_type, target=target)


async def guard_bytes(mesh: InProcessMesh, tmp_path: Path) -> str:
    """Everything the guard's database holds: on SQLite the file and its WAL byte for byte
    (free pages included), on PostgreSQL every row of every table of its schema."""
    url = mesh.settings.storage_url
    if not url.startswith("postgres"):
        files = sorted(tmp_path.rglob("exposure_guard.sqlite3*"))
        assert files
        return "\n".join(f.read_bytes().decode("utf-8", "replace") for f in files)
    seen: list[str] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        tables = await connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            ("exposure_guard",),
        )
        for (table,) in await tables.fetchall():
            rows = await connection.execute(f'SELECT t::text FROM "exposure_guard"."{table}" t')
            seen += [str(row[0]) for row in await rows.fetchall()]
    return "\n".join(seen)


async def redis_holding(mesh: InProcessMesh, words: list[str]) -> list[str]:
    """Keys of Redis whose name or string value holds any of the words (none without Redis)."""
    if not mesh.settings.redis_url:
        return []
    client = aioredis.Redis.from_url(mesh.settings.redis_url)
    found: list[str] = []
    try:
        async for key in client.scan_iter(match="memmesh:*", count=1000):
            value = await client.get(key) if await client.type(key) == b"string" else b""
            text = (bytes(key) + b"\n" + (value or b"")).decode("utf-8", "replace").casefold()
            if any(word.casefold() in text for word in words):
                found.append(bytes(key).decode("utf-8", "replace"))
    finally:
        await client.aclose()
    return found


async def rules_of(
    guard: pb_grpc.ExposureGuardServiceStub, scope: scope_pb2.UserScope
) -> list[pb.Rule]:
    return list((await guard.ListRules(pb.ListRulesRequest(scope=scope))).rules)


async def test_forget_user_leaves_no_rule_and_no_name_and_keeps_other_users(
    mesh: InProcessMesh, tmp_path: Path
) -> None:
    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    who, other = new_user(), new_user()
    name, other_name = unique_name(), unique_name()
    await say(mesh, who, f"My neighbor {name} lives in Accra.")
    set_reply = await guard.SetRule(
        pb.SetRuleRequest(scope=who, rule=dnm(pb.TARGET_TYPE_TOPIC, "neighbor"), now=NOW)
    )
    assert name.casefold() in set_reply.rule.subject_terms
    await guard.SetRule(
        pb.SetRuleRequest(scope=who, rule=dnm(pb.TARGET_TYPE_KEY, f"person.{name}"), now=NOW)
    )
    await guard.SetRule(
        pb.SetRuleRequest(scope=other, rule=dnm(pb.TARGET_TYPE_TOPIC, other_name), now=NOW)
    )
    # Filter fills the cache; before the forget the name is in the store (and in Redis).
    await guard.Filter(pb.FilterRequest(scope=who, channel=memory_pb2.CHANNEL_VOICE))
    assert name.casefold() in (await guard_bytes(mesh, tmp_path)).casefold()
    if mesh.settings.redis_url:
        assert await redis_holding(mesh, [name])

    reply = await guard.ForgetUser(pb.ForgetUserRequest(scope=who, now=NOW))
    assert reply.removed_rule_count == 2
    # No key of the user is left in Redis (a later read caches only the empty rule list).
    assert await redis_holding(mesh, [name, who.user_id]) == []

    assert await rules_of(guard, who) == []
    assert name.casefold() not in (await guard_bytes(mesh, tmp_path)).casefold()
    assert await redis_holding(mesh, [name]) == []
    # The filter no longer holds anything back by the forgotten subject.
    item = pb.FilterItem(
        item_id="e1", text=f"{name} is coming over.", exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK
    )
    filtered = await guard.Filter(
        pb.FilterRequest(scope=who, channel=memory_pb2.CHANNEL_VOICE, items=[item])
    )
    assert list(filtered.allowed_item_ids) == ["e1"]
    # Another user's rule stays, in the store as in the answers.
    [kept] = await rules_of(guard, other)
    assert kept.target == other_name.casefold()
    assert other_name.casefold() in (await guard_bytes(mesh, tmp_path)).casefold()


async def test_forget_user_is_idempotent_and_the_ledger_keeps_only_the_count(
    mesh: InProcessMesh,
) -> None:
    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    who, name = new_user(), unique_name()
    await guard.SetRule(pb.SetRuleRequest(scope=who, rule=dnm(pb.TARGET_TYPE_TOPIC, name), now=NOW))
    first = await guard.ForgetUser(pb.ForgetUserRequest(scope=who, now=NOW))
    again = await guard.ForgetUser(pb.ForgetUserRequest(scope=who, now=NOW))
    assert (first.removed_rule_count, again.removed_rule_count) == (1, 0)
    unknown = await guard.ForgetUser(pb.ForgetUserRequest(scope=new_user(), now=NOW))
    assert unknown.removed_rule_count == 0

    ledger = ledger_grpc.LedgerServiceStub(mesh.channel("ledger"))
    events = [r.event async for r in ledger.Read(ledger_pb.ReadRequest(scope=who))]
    assert [e.event_type for e in events] == [
        "EXPOSURE_RULE_SET",
        "EXPOSURE_RULES_FORGOTTEN",
    ]
    forgot = events[-1]
    assert forgot.reason_code == "USER_FORGET_EVERYTHING"
    assert name.casefold() not in str(forgot).casefold()
    assert "removed_rule_count" in str(forgot)


async def test_forget_user_refuses_a_request_without_a_scope(mesh: InProcessMesh) -> None:

    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await guard.ForgetUser(pb.ForgetUserRequest(now=NOW))
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "scope" in (refused.value.details() or "")
