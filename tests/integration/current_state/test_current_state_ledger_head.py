"""Current State's Apply folds its change straight into the projection when the Ledger's
conditional append proves it is the next state event, and catches up from the stream when
it is not; against a real Ledger engine and a real state store, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import pytest_asyncio

from memmesh.common.v1 import scope_pb2
from memmesh.engines.current_state.adapters.ledger_client import GrpcStateLedger
from memmesh.engines.current_state.adapters.sql_store import SqlStateStore
from memmesh.engines.current_state.domain.state import (
    STATE_EVENT_TYPE,
    Change,
    UserState,
    checksum,
    state_event,
)
from memmesh.engines.current_state.ports import LedgerRecord
from memmesh.engines.current_state.use_cases import Applied, CurrentStateService
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.ledger_writer import ExpectedHead, HeadMoved, LedgerWriter, NewEvent
from memmesh.runtime.errors import details_of
from memmesh.storage.cache import MemoryCache
from memmesh.testing.in_process import InProcessMesh, start_in_process

NOW_US = 1_767_225_600_000_000


@dataclass
class Backend:
    mesh: InProcessMesh
    storage_url: str
    data_dir: Path


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    storage = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    overrides = {} if request.param == "sqlite" else {"storage_url": storage}
    mesh = await start_in_process(["ledger"], tmp_path, **overrides)
    yield Backend(mesh, storage, tmp_path)
    await mesh.stop()


class CountingLedger(GrpcStateLedger):
    """The real Ledger client, counting the replays (Ledger.Read streams) it starts."""

    reads = 0

    async def read_changes(
        self, tenant_id: str, user_id: str, after_sequence: int
    ) -> AsyncIterator[LedgerRecord]:
        self.reads += 1
        async for record in super().read_changes(tenant_id, user_id, after_sequence):
            yield record


class GatedStore(SqlStateStore):
    """The real store; its first read waits until every gated replica has read, so they all
    start from the same version."""

    barrier: asyncio.Barrier | None = None

    async def get(self, tenant_id: str, user_id: str) -> UserState | None:
        state = await super().get(tenant_id, user_id)
        if self.barrier is not None:
            barrier, self.barrier = self.barrier, None
            await barrier.wait()
        return state


@dataclass
class Replica:
    service: CurrentStateService
    ledger: CountingLedger
    store: SqlStateStore


async def replica(backend: Backend, barrier: asyncio.Barrier | None = None) -> Replica:
    """One Current State replica: its own store connection, Ledger client and cache."""
    store = await GatedStore.open(backend.storage_url, backend.data_dir)
    assert isinstance(store, GatedStore)
    store.barrier = barrier
    ledger = CountingLedger(pb_grpc.LedgerServiceStub(backend.mesh.channel("ledger")))
    return Replica(CurrentStateService(store, ledger, MemoryCache()), ledger, store)


def change(kind: str, **values: str | int | bool) -> Change:
    return Change(kind, tuple(sorted(values.items())))


async def apply(
    service: CurrentStateService, scope: scope_pb2.UserScope, key: str, c: Change
) -> Applied:
    return await service.apply(
        scope.tenant_id,
        scope.user_id,
        c,
        expected_version=None,
        reason_code="USER_REQUEST",
        idempotency_key=key,
        now_us=NOW_US,
    )


async def other_engine_events(backend: Backend, scope: scope_pb2.UserScope, tag: str) -> None:
    """Events another engine appends to the same user's stream."""
    writer = LedgerWriter(pb_grpc.LedgerServiceStub(backend.mesh.channel("ledger")))
    await writer.append(
        scope.tenant_id,
        scope.user_id,
        [
            NewEvent(f"atom-{tag}-{n}", "ATOM_CREATED", "USER_STATED", (("n", n),), NOW_US)
            for n in range(3)
        ],
    )


async def stream(backend: Backend, scope: scope_pb2.UserScope) -> list[pb.LedgerEvent]:
    stub = pb_grpc.LedgerServiceStub(backend.mesh.channel("ledger"))
    return [reply.event async for reply in stub.Read(pb.ReadRequest(scope=scope))]


async def assert_rebuild_equals_live(
    service: CurrentStateService, scope: scope_pb2.UserScope
) -> None:
    rebuilt = await service.rebuild(scope.tenant_id, scope.user_id, replace_live=False)
    assert rebuilt.checksum == rebuilt.live_checksum


async def test_apply_folds_the_next_state_event_with_no_read_among_other_engines_events(
    backend: Backend, scope: scope_pb2.UserScope
) -> None:
    one = await replica(backend)
    await other_engine_events(backend, scope, "a")
    first = await apply(one.service, scope, "a", change("display_name", value="Ana"))
    await other_engine_events(backend, scope, "b")
    await apply(one.service, scope, "b", change("timezone", value="Europe/Lisbon"))
    await other_engine_events(backend, scope, "c")
    last = await apply(
        one.service, scope, "c", change("fill_profile", display_name="Bo", primary_language="pt")
    )
    assert one.ledger.reads == 0
    assert (last.state.display_name, last.state.primary_language, last.state.timezone) == (
        "Ana",
        "pt",
        "Europe/Lisbon",
    )
    events = await stream(backend, scope)
    state_sequences = [e.sequence for e in events if e.event_type == STATE_EVENT_TYPE]
    assert first.state.ledger_sequence == state_sequences[0] == 4
    assert (last.state.version, last.state.ledger_sequence) == (3, state_sequences[-1])
    assert len(events) == 12
    stored = await one.store.get(scope.tenant_id, scope.user_id)
    assert stored is not None and checksum(stored) == checksum(last.state)
    await assert_rebuild_equals_live(one.service, scope)
    await one.store.close()


async def test_a_retried_apply_answers_duplicate_with_no_read(
    backend: Backend, scope: scope_pb2.UserScope
) -> None:
    one = await replica(backend)
    first = await apply(one.service, scope, "a", change("timezone", value="UTC"))
    again = await apply(one.service, scope, "a", change("timezone", value="UTC"))
    assert again.duplicate and again.state == first.state and one.ledger.reads == 0
    assert len(await stream(backend, scope)) == 1
    await one.store.close()


async def test_the_conditional_append_is_refused_when_another_state_event_intervened(
    backend: Backend, scope: scope_pb2.UserScope
) -> None:
    one = await replica(backend)
    tenant, user = scope.tenant_id, scope.user_id
    await apply(one.service, scope, "a", change("display_name", value="Ana"))  # state event 1
    # Another replica appended a state event and has not projected it yet.
    lost = await one.ledger.append_change(
        tenant, user, change("timezone", value="UTC"), "USER_REQUEST", "state:lost", NOW_US
    )
    assert (lost.sequence, lost.follows) == (2, False)
    await other_engine_events(backend, scope, "x")  # 3..5
    writer = LedgerWriter(pb_grpc.LedgerServiceStub(backend.mesh.channel("ledger")))
    pending = state_event(change("primary_language", value="es"), "USER_REQUEST", "next", NOW_US)
    with pytest.raises(HeadMoved):
        await writer.append(
            tenant, user, [pending], expected_head=ExpectedHead(STATE_EVENT_TYPE, 1)
        )
    assert len(await stream(backend, scope)) == 5  # nothing written
    # Against the real head it is written, right after the other engine's events.
    [written] = await writer.append(
        tenant, user, [pending], expected_head=ExpectedHead(STATE_EVENT_TYPE, 2)
    )
    assert (written.sequence, written.duplicate) == (6, False)
    # A retry with the same key answers duplicate whatever head it names.
    for head in (1, 2, 6):
        [again] = await writer.append(
            tenant, user, [pending], expected_head=ExpectedHead(STATE_EVENT_TYPE, head)
        )
        assert (again.sequence, again.duplicate) == (6, True)
    # The port appends all the same when the head moved, and says the change does not follow.
    moved = await one.ledger.append_change(
        tenant,
        user,
        change("primary_language", value="pt"),
        "USER_REQUEST",
        "state:moved",
        NOW_US,
        after_sequence=1,
    )
    assert (moved.sequence, moved.duplicate, moved.follows) == (7, False, False)
    assert one.ledger.reads == 0
    # Apply from the projection (at 1) finds the head moved and catches up over 2, 6 and 7.
    applied = await apply(one.service, scope, "c", change("contact_preference", value="TEXT"))
    assert one.ledger.reads == 1
    assert (applied.state.timezone, applied.state.primary_language) == ("UTC", "pt")
    assert (applied.state.version, applied.state.ledger_sequence) == (5, 8)
    assert applied.state.contact_preference == "TEXT"
    await assert_rebuild_equals_live(one.service, scope)
    await one.store.close()


async def test_the_ledger_refuses_a_stale_head_with_aborted_and_writes_nothing(
    backend: Backend, scope: scope_pb2.UserScope
) -> None:
    writer = LedgerWriter(pb_grpc.LedgerServiceStub(backend.mesh.channel("ledger")))

    def event(key: str, event_type: str = "STATE_CHANGED") -> NewEvent:
        return NewEvent(key, event_type, "USER_REQUEST", (("n", 1),), NOW_US)

    tenant, user = scope.tenant_id, scope.user_id
    assert (
        await writer.append(
            tenant, user, [event("s1")], expected_head=ExpectedHead("STATE_CHANGED", 0)
        )
    )[0].sequence == 1
    await writer.append(tenant, user, [event("o1", "ATOM_CREATED")])
    with pytest.raises(HeadMoved):
        await writer.append(
            tenant, user, [event("s2")], expected_head=ExpectedHead("STATE_CHANGED", 0)
        )
    # A type the stream has never held is at 0.
    [other] = await writer.append(
        tenant, user, [event("t1", "TOPIC_OPENED")], expected_head=ExpectedHead("TOPIC_OPENED", 0)
    )
    assert other.sequence == 3
    [next_state] = await writer.append(
        tenant, user, [event("s2")], expected_head=ExpectedHead("STATE_CHANGED", 1)
    )
    assert next_state.sequence == 4 and not next_state.duplicate
    assert [e.sequence for e in await stream(backend, scope)] == [1, 2, 3, 4]


async def test_the_ledger_names_a_bad_expected_head_field(
    backend: Backend, scope: scope_pb2.UserScope
) -> None:
    stub = pb_grpc.LedgerServiceStub(backend.mesh.channel("ledger"))
    event = pb.EventInput(idempotency_key="k", event_type="STATE_CHANGED", reason_code="R")
    event.occur_time.GetCurrentTime()
    for bad, field in (
        (pb.ExpectedHead(event_type="state changed", sequence=1), "expected_head.event_type"),
        (pb.ExpectedHead(sequence=1), "expected_head.event_type"),
        (pb.ExpectedHead(event_type="STATE_CHANGED", sequence=-1), "expected_head.sequence"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Append(pb.AppendRequest(scope=scope, events=[event], expected_head=bad))
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert details_of(raised.value)[1] == [field]
    assert await stream(backend, scope) == []


async def test_two_replicas_applying_from_the_same_version_both_end_in_the_projection(
    backend: Backend, scope: scope_pb2.UserScope
) -> None:
    base = await replica(backend)
    await apply(base.service, scope, "base", change("display_name", value="Ana"))
    barrier = asyncio.Barrier(2)
    a, b = await replica(backend, barrier), await replica(backend, barrier)
    # Both read version 1 before either appends; one append holds the head, the other
    # finds it moved. Whichever saves first, the other's event must not be lost.
    await asyncio.gather(
        apply(a.service, scope, "a", change("timezone", value="UTC")),
        apply(b.service, scope, "b", change("primary_language", value="pt")),
    )
    assert a.ledger.reads + b.ledger.reads >= 1
    state = await base.store.get(scope.tenant_id, scope.user_id)
    assert state is not None
    assert (state.display_name, state.timezone, state.primary_language) == ("Ana", "UTC", "pt")
    assert (state.version, state.ledger_sequence) == (3, 3)
    await assert_rebuild_equals_live(base.service, scope)
    for one in (base, a, b):
        await one.store.close()


async def test_many_concurrent_applies_on_two_replicas_all_end_in_the_projection(
    backend: Backend, scope: scope_pb2.UserScope
) -> None:
    a, b = await replica(backend), await replica(backend)
    devices = [f"d{n}" for n in range(6)]
    await asyncio.gather(
        *(
            apply(
                (a if n % 2 else b).service,
                scope,
                f"k{n}",
                change("device_setting", device_id=device, wake_threshold_bp=100 + n),
            )
            for n, device in enumerate(devices)
        ),
        other_engine_events(backend, scope, "x"),
    )
    state = await a.store.get(scope.tenant_id, scope.user_id)
    assert state is not None and state.version == len(devices)
    assert [d.device_id for d in state.device_settings] == devices
    await assert_rebuild_equals_live(a.service, scope)
    for one in (a, b):
        await one.store.close()
