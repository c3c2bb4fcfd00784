"""Validation from the proto field rules, and the error mapping to gRPC statuses."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2, status_pb2

from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.runtime.errors import (
    Conflict,
    FieldViolation,
    InvalidInput,
    VersionMismatch,
    to_status,
)
from memmesh.runtime.validation import validate, violations
from memmesh.testing.scopes import new_scope


def fields(message) -> list[str]:  # type: ignore[no-untyped-def]
    return [v.field for v in violations(message)]


def valid_append() -> ledger_pb.AppendRequest:
    return ledger_pb.AppendRequest(
        scope=new_scope(),
        events=[
            ledger_pb.EventInput(
                idempotency_key="k",
                event_type="A_B",
                reason_code="R",
                occur_time=Timestamp(seconds=1),
            )
        ],
    )


def test_a_valid_request_has_no_violations() -> None:
    validate(valid_append())


def test_a_missing_scope_is_reported_by_its_leaf_fields() -> None:
    request = valid_append()
    request.ClearField("scope")
    assert fields(request) == ["scope.tenant_id", "scope.user_id"]


def test_nested_and_repeated_fields_are_named_with_their_path() -> None:
    request = valid_append()
    request.events.add(
        idempotency_key="k2",
        event_type="lower case",
        reason_code="R",
        occur_time=Timestamp(seconds=1),
    )
    assert fields(request) == ["events[1].event_type"]


def test_pattern_length_and_count_rules() -> None:
    request = valid_append()
    request.scope.tenant_id = "has space"
    request.scope.user_id = "u" * 129
    assert fields(request) == ["scope.tenant_id", "scope.user_id"]
    too_many = valid_append()
    for n in range(100):
        too_many.events.add(
            idempotency_key=f"k{n}",
            event_type="A",
            reason_code="R",
            occur_time=Timestamp(seconds=1),
        )
    assert fields(too_many) == ["events"]


def test_required_enum_must_not_be_unspecified_and_integers_are_bounded() -> None:
    request = state_pb.ApplyRequest(
        scope=new_scope(),
        change=state_pb.StateChange(set_timezone="UTC"),
        reason_code="R",
        idempotency_key="k",
        now=Timestamp(seconds=1),
        expected_version=-1,
    )
    assert fields(request) == ["expected_version"]


def test_unbounded_strings_still_have_a_ceiling() -> None:
    request = valid_append()
    request.events[0].attributes.add(name="note", string_value="x" * 1025)
    assert fields(request) == ["events[0].attributes[0].string_value"]


def details(status: grpc.Status) -> tuple[str, list[str]]:
    rich = dict(status.trailing_metadata)["grpc-status-details-bin"]
    decoded = status_pb2.Status.FromString(rich)
    reason, names = "", []
    for detail in decoded.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            names = [v.field for v in bad.field_violations]
    return reason, names


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        (
            InvalidInput([FieldViolation("scope.user_id", "is required")]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_FIELD",
        ),
        (Conflict("key reused"), grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT"),
        (VersionMismatch("moved"), grpc.StatusCode.ABORTED, "VERSION_MISMATCH"),
    ],
)
def test_domain_errors_map_to_a_status_with_error_info(error, code, reason) -> None:  # type: ignore[no-untyped-def]
    status = to_status(error)
    assert status.code == code
    found_reason, names = details(status)
    assert found_reason == reason
    if isinstance(error, InvalidInput):
        assert names == ["scope.user_id"]
