"""Typed domain errors and their one mapping to gRPC status codes."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

ERROR_DOMAIN = "memmesh"


class DomainError(Exception):
    """Base of errors the domain raises on purpose; each maps to one status code."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL
    reason: str = "INTERNAL"

    def __init__(self, message: str, *, reason: str | None = None, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        # Carried in ErrorInfo.metadata, e.g. {"engine": "thread_store"} for a failed dependency.
        self.metadata = dict(metadata or {})
        if reason is not None:
            self.reason = reason


@dataclass(frozen=True)
class FieldViolation:
    """One bad field, named by its dotted path in the request."""

    field: str
    description: str


class InvalidInput(DomainError):
    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "INVALID_FIELD"

    def __init__(self, violations: list[FieldViolation]) -> None:
        names = ", ".join(v.field for v in violations)
        super().__init__(f"invalid field(s): {names}")
        self.violations = violations


class NotFound(DomainError):
    code = grpc.StatusCode.NOT_FOUND
    reason = "NOT_FOUND"


class Conflict(DomainError):
    code = grpc.StatusCode.ALREADY_EXISTS
    reason = "IDEMPOTENCY_CONFLICT"


class VersionMismatch(DomainError):
    code = grpc.StatusCode.ABORTED
    reason = "VERSION_MISMATCH"


class PreconditionFailed(DomainError):
    code = grpc.StatusCode.FAILED_PRECONDITION
    reason = "FAILED_PRECONDITION"


class Unauthenticated(DomainError):
    code = grpc.StatusCode.UNAUTHENTICATED
    reason = "UNAUTHENTICATED"


class PermissionDenied(DomainError):
    code = grpc.StatusCode.PERMISSION_DENIED
    reason = "TENANT_MISMATCH"


class DeadlineExpired(DomainError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED
    reason = "DEADLINE_EXPIRED"


class DependencyFailed(DomainError):
    code = grpc.StatusCode.UNAVAILABLE
    reason = "DEPENDENCY_FAILED"


def to_status(error: DomainError) -> grpc.Status:
    """A google.rpc.Status carrying ErrorInfo and, for bad input, a BadRequest."""
    details: list[any_pb2.Any] = []
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata))
    details.append(info)
    if isinstance(error, InvalidInput):
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                for v in error.violations
            ]
        )
        packed = any_pb2.Any()
        packed.Pack(bad_request)
        details.append(packed)
    status = status_pb2.Status(
        code=getattr(code_pb2, error.code.name), message=error.message, details=details
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


def details_of(error: grpc.aio.AioRpcError) -> tuple[str, list[str]]:
    """(ErrorInfo reason, BadRequest field names) of a failed call, for clients and tests."""
    status = rpc_status.from_call(error)
    reason, fields = "", []
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
