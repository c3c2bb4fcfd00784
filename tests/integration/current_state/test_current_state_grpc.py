"""Current State over gRPC with a real Ledger, on SQLite and on PostgreSQL + Redis."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as pb_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.errors import details_of
from memmesh.testing.in_process import InProcessMesh
from memmesh.testing.scopes import new_scope

NOW = Timestamp(seconds=1_767_225_600)


def apply(
    scope: scope_pb2.UserScope, key: str, expected: int | None = None, **change: object
) -> pb.ApplyRequest:
    return pb.ApplyRequest(
        scope=scope,
        change=pb.StateChange(**change),  # type: ignore[arg-type]
        expected_version=expected or 0,
        any_version=expected is None,
        reason_code="USER_REQUEST",
        idempotency_key=key,
        now=NOW,
    )


async def test_apply_records_on_the_ledger_then_get_and_rebuild_agree(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    assert (await state.Get(pb.GetRequest(scope=scope))).state.version == 0
    await state.Apply(apply(scope, "a", expected=0, set_display_name="Kaiser"))
    await state.Apply(apply(scope, "b", set_timezone="America/Los_Angeles"))
    await state.Apply(apply(scope, "c", set_contact_preference=pb.CONTACT_PREFERENCE_TEXT))
    got = (await state.Get(pb.GetRequest(scope=scope))).state
    assert (got.profile.display_name, got.profile.timezone, got.version) == (
        "Kaiser",
        "America/Los_Angeles",
        3,
    )
    assert got.profile.contact_preference == pb.CONTACT_PREFERENCE_TEXT

    ledger = ledger_grpc.LedgerServiceStub(mesh.channel("ledger"))
    events = [r.event async for r in ledger.Read(ledger_pb.ReadRequest(scope=scope))]
    assert [e.event_type for e in events] == ["STATE_CHANGED"] * 3
    assert all(e.reason_code == "USER_REQUEST" for e in events)

    rebuilt = await state.Rebuild(pb.RebuildRequest(scope=scope))
    assert rebuilt.checksum == rebuilt.live_checksum and rebuilt.events_replayed == 3


async def test_a_stale_expected_version_is_aborted(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    await state.Apply(apply(scope, "a", expected=0, set_display_name="Ana"))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await state.Apply(apply(scope, "b", expected=0, set_display_name="Bo"))
    assert raised.value.code() == grpc.StatusCode.ABORTED
    assert (await state.Get(pb.GetRequest(scope=scope))).state.profile.display_name == "Ana"


async def test_get_after_apply_never_serves_the_cached_old_state(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    for n, name in enumerate(["A", "B", "C", "D"]):
        await state.Get(pb.GetRequest(scope=scope))  # warm the cache
        await state.Apply(apply(scope, f"k{n}", set_display_name=name))
        assert (await state.Get(pb.GetRequest(scope=scope))).state.profile.display_name == name


async def test_bad_timezone_is_invalid_argument_naming_the_field(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await state.Apply(apply(scope, "a", set_timezone="Nowhere/Land"))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details_of(raised.value)[1] == ["change.set_timezone"]
    assert (await state.Get(pb.GetRequest(scope=scope))).state.version == 0


async def test_one_user_never_sees_another_users_state(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    await state.Apply(apply(scope, "a", set_display_name="Private"))
    other = new_scope()
    other.tenant_id = scope.tenant_id
    assert (await state.Get(pb.GetRequest(scope=other))).state.profile.display_name == ""


async def test_fill_empty_profile_sets_only_empty_fields_and_rebuilds_alike(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    await state.Apply(apply(scope, "a", set_display_name="Ana"))
    fill = pb.ProfileFill(display_name="Bo", primary_language="es")
    filled = await state.Apply(apply(scope, "f", fill_empty_profile=fill))
    assert (filled.state.profile.display_name, filled.state.profile.primary_language) == (
        "Ana",
        "es",
    )
    assert not filled.unchanged and filled.state.version == 2
    again = await state.Apply(apply(scope, "f", fill_empty_profile=fill))
    assert again.state.version == 2
    nothing = await state.Apply(
        apply(scope, "g", fill_empty_profile=pb.ProfileFill(display_name="Cy"))
    )
    assert nothing.unchanged and nothing.state.version == 2

    ledger = ledger_grpc.LedgerServiceStub(mesh.channel("ledger"))
    events = [r.event async for r in ledger.Read(ledger_pb.ReadRequest(scope=scope))]
    assert len(events) == 2
    rebuilt = await state.Rebuild(pb.RebuildRequest(scope=scope))
    assert rebuilt.checksum == rebuilt.live_checksum and rebuilt.events_replayed == 2
    assert rebuilt.state.profile.display_name == "Ana"


async def test_an_empty_fill_is_invalid_argument(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    state = pb_grpc.CurrentStateServiceStub(mesh.channel("current_state"))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await state.Apply(apply(scope, "a", fill_empty_profile=pb.ProfileFill()))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details_of(raised.value)[1] == ["change.fill_empty_profile"]
