"""Field rules at the edge: Timestamp range, the caller's clock window, control characters in
identifiers, NUL in text, undecodable bytes named by field, bounded and escaped log ids, and
a peer's verdict on the input passed through unchanged."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2, status_pb2

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.errors import DependencyFailed, FieldViolation
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.errors import status_code_of, to_status
from memmesh.runtime.interceptors import (
    LOGGED_ID_MAX,
    UndecodableRequest,
    loggable_id,
    tolerant_deserializer,
)
from memmesh.runtime.validation import (
    MAX_TIMESTAMP_SECONDS,
    MIN_TIMESTAMP_SECONDS,
    ClockWindow,
    clock_violations,
    passes,
    undecodable,
    violations,
)

SERVER_NOW_S = 1_767_225_600  # 2026-01-01T00:00:00Z
DAY_S = 86_400


def command(now: Timestamp | None = None, **scope: str) -> pb.CommandRequest:
    return pb.CommandRequest(
        scope=scope_pb2.UserScope(
            tenant_id=scope.get("tenant_id", "tenant-a"), user_id=scope.get("user_id", "user-1")
        ),
        command=pb.USER_COMMAND_DO_NOT_MENTION,
        target="brother",
        session_id="s1",
        now=now if now is not None else Timestamp(seconds=SERVER_NOW_S),
    )


def fields(message) -> list[str]:  # type: ignore[no-untyped-def]
    found = [v.field for v in violations(message)]
    # The fast path and the full walk always agree.
    assert passes(message) == (not found)
    return found


@pytest.mark.parametrize(
    ("seconds", "nanos", "expected"),
    [
        (2**62, 0, ["now.seconds"]),  # microseconds put into seconds, and then some
        (MIN_TIMESTAMP_SECONDS - 1, 0, ["now.seconds"]),  # year 0
        (MAX_TIMESTAMP_SECONDS + 1, 0, ["now.seconds"]),  # year 10000
        (-(2**63), 0, ["now.seconds"]),
        (SERVER_NOW_S, 2_000_000_000, ["now.nanos"]),
        (SERVER_NOW_S, -1, ["now.nanos"]),
        (2**62, -5, ["now.seconds", "now.nanos"]),
    ],
)
def test_timestamps_outside_their_range_are_refused_by_field(
    seconds: int, nanos: int, expected: list[str]
) -> None:
    assert fields(command(Timestamp(seconds=seconds, nanos=nanos))) == expected


@pytest.mark.parametrize("seconds", [MIN_TIMESTAMP_SECONDS, MAX_TIMESTAMP_SECONDS, 0, SERVER_NOW_S])
def test_timestamps_within_range_pass_the_static_rules(seconds: int) -> None:
    assert fields(command(Timestamp(seconds=seconds, nanos=999_999_999))) == []


def test_a_timestamp_nested_in_a_repeated_message_is_checked_too() -> None:
    request = pb.IngestRequest(
        scope=scope_pb2.UserScope(tenant_id="t", user_id="u"),
        turn=memory_pb2.Turn(
            turn_id="t1",
            session_id="s1",
            role=memory_pb2.ROLE_USER,
            text="hi",
            time=Timestamp(seconds=2**62),
        ),
    )
    assert fields(request) == ["turn.time.seconds"]


@pytest.mark.parametrize(
    ("tenant", "user", "expected"),
    [
        ("tenant-a", "user\x00one", ["scope.user_id"]),
        ("tenant-a\nrpc method=forged", "user-1", ["scope.tenant_id"]),
        ("tenant-a", "user\u2028one", ["scope.user_id"]),
        ("x" * 3_000_000, "user-1", ["scope.tenant_id"]),
    ],
)
def test_scope_ids_with_control_characters_or_megabytes_are_refused(
    tenant: str, user: str, expected: list[str]
) -> None:
    assert fields(command(tenant_id=tenant, user_id=user)) == expected


@pytest.mark.parametrize("bad", ["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\u2029"])
def test_identifiers_refuse_nul_and_control_characters(bad: str) -> None:
    request = command()
    request.session_id = f"s{bad}1"
    request.target = f"my{bad}brother"
    assert fields(request) == ["target", "session_id"]
    described = {v.description for v in violations(request)}
    assert described == {"must not contain NUL or control characters"}


def test_free_text_keeps_newlines_and_tabs_but_refuses_nul() -> None:
    request = pb.BriefRequest(
        scope=scope_pb2.UserScope(tenant_id="t", user_id="u"),
        session_id="s1",
        now=Timestamp(seconds=SERVER_NOW_S),
        channel=memory_pb2.CHANNEL_VOICE,
        query="first line\n\tsecond line",
    )
    assert fields(request) == []
    request.query = "what\x00is my sister called"
    assert fields(request) == ["query"]
    request.query = "ok"
    request.unanswered_question_ids.append("q\n1")
    assert fields(request) == ["unanswered_question_ids[0]"]


def test_now_outside_the_clock_window_is_refused() -> None:
    window = ClockWindow(past_s=10 * 365 * DAY_S, future_s=DAY_S)
    inside = [SERVER_NOW_S, SERVER_NOW_S - 9 * 365 * DAY_S, SERVER_NOW_S + DAY_S - 1]
    for seconds in inside:
        assert clock_violations(command(Timestamp(seconds=seconds)), window, SERVER_NOW_S) == []
    outside = [SERVER_NOW_S - 11 * 365 * DAY_S, SERVER_NOW_S + 2 * DAY_S, 0]
    for seconds in outside:
        found = clock_violations(command(Timestamp(seconds=seconds)), window, SERVER_NOW_S)
        assert [v.field for v in found] == ["now"], seconds


def test_a_turn_time_outside_the_clock_window_is_refused() -> None:
    window = ClockWindow()
    request = pb.IngestRequest(
        scope=scope_pb2.UserScope(tenant_id="t", user_id="u"),
        turn=memory_pb2.Turn(
            turn_id="t1",
            session_id="s1",
            role=memory_pb2.ROLE_USER,
            time=Timestamp(seconds=253_402_300_000),  # 9999-12-31
        ),
    )
    assert [v.field for v in clock_violations(request, window, SERVER_NOW_S)] == ["turn.time"]
    request.turn.time.seconds = SERVER_NOW_S - 400 * DAY_S  # an imported conversation
    assert clock_violations(request, window, SERVER_NOW_S) == []


def test_the_clock_window_is_configured_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMMESH_CLOCK_SKEW_PAST_S", "60")
    monkeypatch.setenv("MEMMESH_CLOCK_SKEW_FUTURE_S", "5")
    window = ClockWindow()
    assert (window.past_s, window.future_s) == (60, 5)
    late = command(Timestamp(seconds=SERVER_NOW_S - 61))
    assert [v.field for v in clock_violations(late, window, SERVER_NOW_S)] == ["now"]
    early = command(Timestamp(seconds=SERVER_NOW_S + 6))
    assert [v.field for v in clock_violations(early, window, SERVER_NOW_S)] == ["now"]


def test_undecodable_bytes_name_the_field_at_fault() -> None:
    good = command(user_id="XXXX").SerializeToString()
    bad_utf8 = good.replace(b"XXXX", b"\xff\xfe\xfd\xfc")
    assert [v.field for v in undecodable(pb.CommandRequest.DESCRIPTOR, bad_utf8).violations] == [
        "scope.user_id"
    ]
    truncated = good[:-3]
    assert undecodable(pb.CommandRequest.DESCRIPTOR, truncated).violations[0].field == "now"
    garbage = b"\xff\xff\xff\xff"
    assert undecodable(pb.CommandRequest.DESCRIPTOR, garbage).violations[0].field == "request"


def test_the_tolerant_deserializer_hands_over_the_refusal_instead_of_raising() -> None:
    deserialize = tolerant_deserializer(pb.CommandRequest.FromString)
    assert deserialize is not None
    good = command(user_id="XXXX").SerializeToString()
    assert deserialize(good) == command(user_id="XXXX")
    refused = deserialize(good.replace(b"XXXX", b"\xc3\x28ab"))
    assert isinstance(refused, UndecodableRequest)
    assert [v.field for v in refused.error.violations] == ["scope.user_id"]


def test_logged_identifiers_are_escaped_and_bounded() -> None:
    forged = loggable_id("tenant-a\n2026-01-01 gateway INFO rpc method=/forged")
    assert "\n" not in forged and forged.startswith("tenant-a\\n")
    huge = loggable_id("t" * 3_000_000)
    assert len(huge) < LOGGED_ID_MAX + 40 and huge.endswith("(3000000 chars)")
    assert loggable_id("caf\u00e9\x00") == "caf\\xe9\\x00"
    assert loggable_id("tenant-a") == "tenant-a"


def _bad_request_fields(status: grpc.Status) -> list[str]:
    rich = dict(status.trailing_metadata)["grpc-status-details-bin"]
    names = []
    for detail in status_pb2.Status.FromString(rich).details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            names.extend(v.field for v in bad.field_violations)
    return names


@pytest.mark.parametrize("peer_status", ["INVALID_ARGUMENT", "FAILED_PRECONDITION"])
def test_a_peers_verdict_on_the_input_passes_through_with_its_fields(peer_status: str) -> None:
    error = DependencyFailed(
        "exposure_guard",
        peer_status,
        "invalid field(s): now.seconds",
        peer_reason="INVALID_FIELD",
        violations=[FieldViolation("now.seconds", "out of range")],
    )
    assert error.caused_by_input
    assert status_code_of(error) == grpc.StatusCode[peer_status]
    status = to_status(error)
    assert status.code == grpc.StatusCode[peer_status]
    assert _bad_request_fields(status) == ["now.seconds"]
    assert "retry" not in status.details.lower()


def test_a_peer_that_is_down_is_still_unavailable() -> None:
    error = DependencyFailed("exposure_guard", "UNAVAILABLE", "connection refused")
    assert to_status(error).code == grpc.StatusCode.UNAVAILABLE


def test_copies_of_archived_turns_keep_their_recorded_times() -> None:
    # An index copy of a turn recorded long ago is not the caller's clock.
    from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb

    request = ranker_pb.UpsertRequest(
        scope=scope_pb2.UserScope(tenant_id="t", user_id="u"),
        documents=[
            ranker_pb.Document(
                turn=memory_pb2.Turn(
                    turn_id="t1",
                    session_id="s1",
                    role=memory_pb2.ROLE_USER,
                    time=Timestamp(seconds=100),
                )
            )
        ],
    )
    assert clock_violations(request, ClockWindow(), SERVER_NOW_S) == []
    assert fields(request) == []


def test_numeric_fields_that_were_unchecked_now_have_bounds() -> None:
    from memmesh.current_state.v1 import current_state_service_pb2 as state_pb

    atom = memory_pb2.Atom(confidence_bp=10_001, use_count=-1, version=-1)
    found = [v.field for v in violations(atom)]
    assert {"confidence_bp", "use_count", "version"} <= set(found)
    setting = state_pb.DeviceSetting(device_id="d1", wake_threshold_bp=-5)
    assert fields(setting) == ["wake_threshold_bp"]
