"""The one mapping of domain errors to gRPC statuses, and of a peer's failed call back to
a domain error (`call_engine`)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from memmesh.errors import (
    Conflict,
    DeadlineExpired,
    DependencyFailed,
    DomainError,
    FieldViolation,
    InvalidInput,
    NotFound,
    PermissionDenied,
    PreconditionFailed,
    Unauthenticated,
    VersionMismatch,
)

__all__ = [
    "Conflict",
    "DeadlineExpired",
    "DependencyFailed",
    "DomainError",
    "FieldViolation",
    "InvalidInput",
    "NotFound",
    "PermissionDenied",
    "PreconditionFailed",
    "Unauthenticated",
    "VersionMismatch",
    "call_engine",
    "details_of",
    "error_info_of",
    "field_violations_of",
    "status_code_of",
    "to_status",
]

ERROR_DOMAIN = "memmesh"
T = TypeVar("T")


def status_code_of(error: DomainError) -> grpc.StatusCode:
    """The gRPC status code a domain error is answered with."""
    return grpc.StatusCode[error.status_name]


async def call_engine(engine: str, call: Awaitable[T]) -> T:
    """Await a call to a peer engine; its failure becomes one DependencyFailed naming the
    engine at fault (the peer's own ErrorInfo says when it failed because of another)."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        info = error_info_of(error)
        raise DependencyFailed(
            info.metadata.get("engine") or engine,
            info.metadata.get("peer_status") or error.code().name,
            error.details() or "",
            peer_reason=info.reason,
            violations=[FieldViolation(f, d) for f, d in field_violations_of(error)],
        ) from error


def to_status(error: DomainError) -> grpc.Status:
    """A google.rpc.Status carrying ErrorInfo and, for bad input, a BadRequest."""
    details: list[any_pb2.Any] = []
    info = any_pb2.Any()
    info.Pack(
        error_details_pb2.ErrorInfo(
            reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata
        )
    )
    details.append(info)
    violations = error.violations if isinstance(error, InvalidInput | DependencyFailed) else []
    if violations:
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=v.field, description=v.description
                )
                for v in violations
            ]
        )
        packed = any_pb2.Any()
        packed.Pack(bad_request)
        details.append(packed)
    status = status_pb2.Status(
        code=getattr(code_pb2, error.status_name), message=error.message, details=details
    )
    return rpc_status.to_status(status)


def error_info_of(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo of a failed call (empty when it carries none)."""
    status = rpc_status.from_call(error)
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    return error_details_pb2.ErrorInfo()


def field_violations_of(error: grpc.aio.AioRpcError) -> list[tuple[str, str]]:
    """(field, description) of each BadRequest violation a failed call carries."""
    status = rpc_status.from_call(error)
    found: list[tuple[str, str]] = []
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            found.extend((v.field, v.description) for v in bad.field_violations)
    return found


def details_of(error: grpc.aio.AioRpcError) -> tuple[str, list[str]]:
    """(ErrorInfo reason, BadRequest field names) of a failed call, for clients and tests."""
    status = rpc_status.from_call(error)
    reason = ""
    fields: list[str] = []
    if status is None:
        return reason, fields
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            reason = error_info_of(error).reason
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields = [v.field for v in bad.field_violations]
    return reason, fields
