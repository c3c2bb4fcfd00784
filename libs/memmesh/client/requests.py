"""Gateway requests built from plain values, shared by every client of the gateway."""

from __future__ import annotations

from typing import TypedDict

from memmesh.common.v1 import bundle_pb2, memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.timeconv import timestamp_of

CHANNELS = {"voice": memory_pb2.CHANNEL_VOICE, "text": memory_pb2.CHANNEL_TEXT}
ROLES = {"user": memory_pb2.ROLE_USER, "assistant": memory_pb2.ROLE_ASSISTANT}
MODES = {
    None: bundle_pb2.SESSION_MODE_UNSPECIFIED,
    "session_start": bundle_pb2.SESSION_MODE_SESSION_START,
    "in_session": bundle_pb2.SESSION_MODE_IN_SESSION,
}


class BriefOptions(TypedDict, total=False):
    """How a Brief is asked for, beyond whose turn and when (BriefRequest's fields)."""

    channel: str
    mode: str | None
    identity_verified: bool
    unanswered_question_ids: tuple[str, ...]
    user_review_requested: bool
    device_restored: bool


def user_scope(tenant_id: str, user_id: str) -> scope_pb2.UserScope:
    """Whose memory a request reads or writes."""
    return scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)


def brief_request(
    scope: scope_pb2.UserScope,
    session_id: str,
    now_us: int,
    query: str,
    *,
    channel: str = "voice",
    mode: str | None = None,
    identity_verified: bool = True,
    unanswered_question_ids: tuple[str, ...] = (),
    user_review_requested: bool = False,
    device_restored: bool = False,
) -> pb.BriefRequest:
    """The Brief of one turn; times are integer microseconds since the epoch."""
    return pb.BriefRequest(
        scope=scope,
        session_id=session_id,
        now=timestamp_of(now_us),
        mode=MODES[mode],
        query=query,
        channel=CHANNELS[channel],
        identity_verified=identity_verified,
        unanswered_question_ids=list(unanswered_question_ids),
        user_review_requested=user_review_requested,
        device_restored=device_restored,
    )


def ingest_request(
    scope: scope_pb2.UserScope,
    session_id: str,
    turn_id: str,
    role: str,
    text: str,
    time_us: int,
    *,
    identity_verified: bool = True,
) -> pb.IngestRequest:
    """One turn to record, "user" or "assistant"; a verified speaker's turn teaches the
    learning capsule (as brief_request, verified unless told otherwise)."""
    turn = memory_pb2.Turn(
        turn_id=turn_id,
        session_id=session_id,
        role=ROLES[role],
        text=text,
        time=timestamp_of(time_us),
    )
    return pb.IngestRequest(scope=scope, turn=turn, identity_verified=identity_verified)


def command_request(
    scope: scope_pb2.UserScope, session_id: str, command: str, now_us: int, target: str = ""
) -> pb.CommandRequest:
    """A control command by name, e.g. "DO_NOT_MENTION"."""
    return pb.CommandRequest(
        scope=scope,
        command=pb.UserCommand.Value(f"USER_COMMAND_{command.upper()}"),
        target=target,
        session_id=session_id,
        now=timestamp_of(now_us),
    )


def upsert_work_order_request(
    scope: scope_pb2.UserScope,
    work_order_id: str,
    title: str,
    status: str,
    now_us: int,
    pending_question: str = "",
) -> pb.UpsertWorkOrderRequest:
    """A work order's status by name, e.g. "CLARIFY"."""
    return pb.UpsertWorkOrderRequest(
        scope=scope,
        work_order_id=work_order_id,
        title=title,
        status=state_pb.WorkOrderStatus.Value(f"WORK_ORDER_STATUS_{status.upper()}"),
        pending_question=pending_question,
        now=timestamp_of(now_us),
    )


def remember_request(
    scope: scope_pb2.UserScope, channel: str = "voice", identity_verified: bool = True
) -> pb.RememberRequest:
    """ "What do you remember about me?"."""
    return pb.RememberRequest(
        scope=scope, channel=CHANNELS[channel], identity_verified=identity_verified
    )


def open_session_request(
    scope: scope_pb2.UserScope, session_id: str, now_us: int
) -> pb.OpenSessionRequest:
    """Open a session now."""
    return pb.OpenSessionRequest(scope=scope, session_id=session_id, now=timestamp_of(now_us))


def close_session_request(
    scope: scope_pb2.UserScope, session_id: str, now_us: int
) -> pb.CloseSessionRequest:
    """Close a session now (its digest is emitted)."""
    return pb.CloseSessionRequest(scope=scope, session_id=session_id, now=timestamp_of(now_us))
