"""Subject keys and the shared writer against a real Ledger process, on SQLite and on
PostgreSQL: keys made once and held beside the chain, appends refused with a shredded key,
crypto-shredding that leaves the chain verifiable and the key's bytes gone."""

from __future__ import annotations

import asyncio
import base64
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import psycopg
import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.ledger_event import Linkable, Sealed
from memmesh.ledger_keys import SubjectKeys, shred_subject_key
from memmesh.ledger_writer import (
    MAX_EVENTS_PER_APPEND,
    SUBJECT_KEY_ATTRIBUTE,
    Appended,
    LedgerWriter,
    NewEvent,
)
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.errors import Conflict, DependencyFailed
from memmesh.runtime.supervisor import Mesh
from memmesh.testing.otlp_receiver import OtlpReceiver

TOKEN = "ledger-keys-token"
NOW_US = 1_767_225_600_000_000
NAME = "Kwame Mensah"


@pytest.fixture(params=["sqlite", "postgres"], scope="module")
def ledger_mesh(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Mesh, Path, str]]:
    storage = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    data_dir = tmp_path_factory.mktemp(f"ledger-keys-{request.param}")
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_STORAGE_URL": storage,
        "MEMMESH_INTERNAL_TOKEN": TOKEN,
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(["ledger"], env=env) as mesh:
        yield mesh, data_dir, storage


@pytest_asyncio.fixture
async def stub(ledger_mesh: tuple[Mesh, Path, str]) -> AsyncIterator[pb_grpc.LedgerServiceStub]:
    async with engine_channel(ledger_mesh[0].addrs["ledger"], TOKEN, 10.0) as channel:
        yield pb_grpc.LedgerServiceStub(channel)


@pytest.fixture
def scope() -> scope_pb2.UserScope:
    token = uuid.uuid4().hex[:10]
    return scope_pb2.UserScope(tenant_id=f"keys-{token}", user_id=f"u-{token}")


def fact(n: int, name: str = NAME) -> NewEvent:
    return NewEvent(
        f"fact-{name}-{n}",
        "ATOM_CREATED",
        "USER_STATED",
        (("key", Linkable(f"relationship.brother.{name.lower()}")), ("n", n)),
        NOW_US + n,
    )


async def read_all(
    stub: pb_grpc.LedgerServiceStub, scope: scope_pb2.UserScope
) -> list[pb.LedgerEvent]:
    return [r.event async for r in stub.Read(pb.ReadRequest(scope=scope))]


def raw_bytes(ledger_mesh: tuple[Mesh, Path, str], scope: scope_pb2.UserScope) -> bytes:
    """Every byte the Ledger stored: the SQLite file with its WAL (free pages included), or
    the user's rows of both PostgreSQL tables."""
    _, data_dir, storage = ledger_mesh
    if storage == "sqlite":
        return b"".join(p.read_bytes() for p in sorted(data_dir.glob("ledger.sqlite3*")))
    with psycopg.connect(storage) as connection:
        rows = connection.execute(
            "SELECT e::text FROM ledger.ledger_events e WHERE tenant_id = %s "
            "UNION ALL SELECT k::text FROM ledger.subject_keys k WHERE tenant_id = %s",
            (scope.tenant_id, scope.tenant_id),
        ).fetchall()
    return "\n".join(r[0] for r in rows).encode()


def stored_key_count(ledger_mesh: tuple[Mesh, Path, str], scope: scope_pb2.UserScope) -> int:
    _, data_dir, storage = ledger_mesh
    query = "SELECT count(*) FROM {}subject_keys WHERE tenant_id = {} AND user_id = {}"
    if storage == "sqlite":
        with sqlite3.connect(data_dir / "ledger.sqlite3") as connection:
            return int(
                connection.execute(
                    query.format("", "?", "?"), (scope.tenant_id, scope.user_id)
                ).fetchone()[0]
            )
    with psycopg.connect(storage) as connection:
        row = connection.execute(
            query.format("ledger.", "%s", "%s"), (scope.tenant_id, scope.user_id)
        ).fetchone()
        assert row is not None
        return int(row[0])


async def test_a_users_key_is_made_once_and_each_user_has_their_own(
    stub: pb_grpc.LedgerServiceStub, scope: scope_pb2.UserScope
) -> None:
    first = await stub.GetSubjectKey(pb.GetSubjectKeyRequest(scope=scope))
    again = await stub.GetSubjectKey(pb.GetSubjectKeyRequest(scope=scope))
    other = await stub.GetSubjectKey(
        pb.GetSubjectKeyRequest(
            scope=scope_pb2.UserScope(tenant_id=scope.tenant_id, user_id=scope.user_id + "-b")
        )
    )
    assert (first.key_id, first.secret) == (again.key_id, again.secret)
    assert len(first.secret) == 64 and first.key_id
    assert other.key_id != first.key_id and other.secret != first.secret


async def test_the_writer_sends_batches_of_at_most_one_hundred_in_order(
    stub: pb_grpc.LedgerServiceStub, scope: scope_pb2.UserScope
) -> None:
    events = [fact(n) for n in range(MAX_EVENTS_PER_APPEND + 1)]
    writer = LedgerWriter(stub)
    outcomes = await writer.append(scope.tenant_id, scope.user_id, events)
    assert outcomes == [Appended(n + 1, False) for n in range(MAX_EVENTS_PER_APPEND + 1)]
    # A retry finds every key stored and writes nothing.
    again = await writer.append(scope.tenant_id, scope.user_id, events)
    assert again == [Appended(n + 1, True) for n in range(MAX_EVENTS_PER_APPEND + 1)]
    assert len(await read_all(stub, scope)) == MAX_EVENTS_PER_APPEND + 1


async def test_a_key_stored_with_other_content_is_a_conflict(
    stub: pb_grpc.LedgerServiceStub, scope: scope_pb2.UserScope
) -> None:
    writer = LedgerWriter(stub)
    await writer.append(scope.tenant_id, scope.user_id, [fact(1)])
    changed = NewEvent("fact-Kwame Mensah-1", "ATOM_CREATED", "USER_STATED", (("n", 2),), NOW_US)
    with pytest.raises(Conflict):
        await writer.append(scope.tenant_id, scope.user_id, [changed])


async def test_an_unreachable_ledger_is_a_dependency_failure_naming_it(
    scope: scope_pb2.UserScope,
) -> None:
    async with engine_channel("127.0.0.1:9", TOKEN, 1.0) as channel:
        writer = LedgerWriter(pb_grpc.LedgerServiceStub(channel))
        with pytest.raises(DependencyFailed) as failed:
            await writer.append(scope.tenant_id, scope.user_id, [fact(1)])
    assert (failed.value.engine, failed.value.status_name) == ("ledger", "UNAVAILABLE")


async def test_the_stored_rows_hold_no_name_only_hashes_that_need_the_key(
    ledger_mesh: tuple[Mesh, Path, str],
    stub: pb_grpc.LedgerServiceStub,
    scope: scope_pb2.UserScope,
) -> None:
    writer = LedgerWriter(stub)
    sealed = NewEvent(
        "profile-1", "STATE_CHANGED", "USER_REQUEST", (("value", Sealed(NAME)),), NOW_US
    )
    await writer.append(scope.tenant_id, scope.user_id, [fact(1), sealed])
    events = await read_all(stub, scope)
    ring = await writer.keys.fetch(scope.tenant_id, scope.user_id)
    served = b"".join(e.SerializeToString() for e in events)
    for word in (b"kwame", b"mensah", b"brother", b"fact-"):
        assert word not in served.lower() and word not in raw_bytes(ledger_mesh, scope).lower()
    attributes = {a.name: a.string_value for a in events[0].attributes}
    assert attributes["key"] == ring.linkable("relationship.brother.kwame mensah")
    assert attributes[SUBJECT_KEY_ATTRIBUTE] == ring.key_id
    assert events[0].idempotency_key == ring.idempotency_key("fact-Kwame Mensah-1")
    profile = {a.name: a.string_value for a in events[1].attributes}
    assert ring.open("value", profile["value"]) == NAME


async def test_shredding_destroys_the_key_keeps_the_chain_verifiable_and_starts_a_fresh_key(
    ledger_mesh: tuple[Mesh, Path, str],
    stub: pb_grpc.LedgerServiceStub,
    scope: scope_pb2.UserScope,
) -> None:
    writer = LedgerWriter(stub)
    await writer.append(scope.tenant_id, scope.user_id, [fact(1), fact(2)])
    old = await writer.keys.fetch(scope.tenant_id, scope.user_id)
    old_secret = (await stub.GetSubjectKey(pb.GetSubjectKeyRequest(scope=scope))).secret
    assert old_secret in raw_bytes(ledger_mesh, scope) or ledger_mesh[2] != "sqlite"

    shredded = await LedgerWriter(stub).shred_subject_key(
        scope.tenant_id, scope.user_id, NOW_US + 10
    )
    assert shredded.shredded and shredded.key_id == old.key_id and shredded.sequence == 3
    assert stored_key_count(ledger_mesh, scope) == 0
    # The secret's bytes are gone from the file, its free pages and its WAL (or the table).
    assert old_secret not in raw_bytes(ledger_mesh, scope)
    again = await shred_subject_key(stub, scope.tenant_id, scope.user_id, NOW_US + 11)
    assert not again.shredded and again.sequence == 0

    verified = await stub.Verify(pb.VerifyRequest(scope=scope))
    assert verified.intact and verified.event_count == 3
    events = await read_all(stub, scope)
    assert events[-1].event_type == "SUBJECT_KEY_SHREDDED"
    assert {a.name: a.string_value for a in events[-1].attributes} == {"key_id": old.key_id}

    # The writer still holds the old key in its cache: the Ledger refuses it, and the writer
    # moves to the fresh key on its own.
    await writer.append(scope.tenant_id, scope.user_id, [fact(3)])
    fresh = await writer.keys.fetch(scope.tenant_id, scope.user_id)
    assert fresh.key_id != old.key_id
    events = await read_all(stub, scope)
    newest = {a.name: a.string_value for a in events[-1].attributes}
    assert newest[SUBJECT_KEY_ATTRIBUTE] == fresh.key_id
    assert newest["key"] == fresh.linkable("relationship.brother.kwame mensah")
    # Nothing made under the old key can be recomputed with the fresh one.
    assert fresh.linkable("relationship.brother.kwame mensah") not in {
        a.string_value for e in events[:2] for a in e.attributes
    }
    assert (await stub.Verify(pb.VerifyRequest(scope=scope))).intact


async def test_an_append_naming_a_key_that_is_not_the_users_is_refused(
    stub: pb_grpc.LedgerServiceStub, scope: scope_pb2.UserScope
) -> None:
    request = pb.AppendRequest(
        scope=scope,
        events=[
            pb.EventInput(
                idempotency_key="k",
                event_type="TEST_EVENT",
                reason_code="TEST",
                occur_time=Timestamp(seconds=1_767_225_600),
            )
        ],
        subject_key_id="not-a-key",
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.Append(request)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert await read_all(stub, scope) == []


async def test_shred_needs_a_scope_and_a_time(stub: pb_grpc.LedgerServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.ShredSubjectKey(pb.ShredSubjectKeyRequest())
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_after_a_shred_a_rebuild_has_no_sealed_words_and_no_secret_reaches_spans_or_logs(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    receiver = OtlpReceiver()
    endpoint = await receiver.start()
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path),
        "MEMMESH_INTERNAL_TOKEN": TOKEN,
        "MEMMESH_OTLP_ENDPOINT": endpoint,
        "MEMMESH_LOG_LEVEL": "DEBUG",
    }
    scope = scope_pb2.UserScope(tenant_id="keys-spans", user_id=f"u-{uuid.uuid4().hex[:10]}")
    mesh = Mesh(["ledger", "current_state"], env=env)
    await asyncio.to_thread(mesh.start)
    try:
        async with (
            engine_channel(mesh.addrs["current_state"], TOKEN, 10.0) as state_channel,
            engine_channel(mesh.addrs["ledger"], TOKEN, 10.0) as ledger_channel,
        ):
            state = state_grpc.CurrentStateServiceStub(state_channel)
            ledger = pb_grpc.LedgerServiceStub(ledger_channel)
            for key, change in (
                ("a", state_pb.StateChange(set_display_name=NAME)),
                ("b", state_pb.StateChange(set_timezone="Africa/Accra")),
            ):
                await state.Apply(
                    state_pb.ApplyRequest(
                        scope=scope,
                        change=change,
                        any_version=True,
                        reason_code="USER_REQUEST",
                        idempotency_key=key,
                        now=Timestamp(seconds=1_767_225_600),
                    )
                )
            secret = (await ledger.GetSubjectKey(pb.GetSubjectKeyRequest(scope=scope))).secret
            kept = await state.Rebuild(state_pb.RebuildRequest(scope=scope))
            assert kept.state.profile.display_name == NAME
            assert kept.state.profile.timezone == "Africa/Accra"
            await shred_subject_key(ledger, scope.tenant_id, scope.user_id, NOW_US + 5)
            rebuilt = await state.Rebuild(state_pb.RebuildRequest(scope=scope))
            assert (await ledger.Verify(pb.VerifyRequest(scope=scope))).intact
        for _ in range(100):  # the engines export in batches every 200 ms
            if any(s.name.endswith("ShredSubjectKey") for s in receiver.spans):
                break
            await asyncio.sleep(0.05)
    finally:
        await asyncio.to_thread(mesh.stop)
        await receiver.stop()
    # The sealed words open no more: the fold finds those fields empty.
    assert (rebuilt.state.profile.display_name, rebuilt.state.profile.timezone) == ("", "")
    assert rebuilt.events_replayed == 2
    assert any(s.name.endswith("GetSubjectKey") for s in receiver.spans)
    spans = " ".join(" ".join(s.attributes.values()) for s in receiver.spans)
    logs = capfd.readouterr()
    assert "GetSubjectKey" in logs.err + logs.out  # the engines' logs were captured
    for text in (spans, logs.out, logs.err):
        for needle in (secret.hex(), base64.b64encode(secret).decode(), NAME, "Accra"):
            assert needle not in text


async def test_a_cached_key_is_dropped_after_its_ttl_even_for_an_idle_user(
    stub: pb_grpc.LedgerServiceStub, scope: scope_pb2.UserScope
) -> None:
    keys = SubjectKeys(stub, ttl_s=0.3)
    held = await keys.current(scope.tenant_id, scope.user_id)
    assert await keys.current(scope.tenant_id, scope.user_id) is held  # cached
    await shred_subject_key(stub, scope.tenant_id, scope.user_id, NOW_US)
    await asyncio.sleep(0.4)
    # Another user's fetch prunes the idle user's expired key from memory.
    await keys.current(scope.tenant_id, scope.user_id + "-other")
    assert len(keys) == 1
    fresh = await keys.current(scope.tenant_id, scope.user_id)
    assert fresh.key_id != held.key_id and len(keys) == 2
