"""Typed domain errors, with no gRPC in sight: each names the status it maps to and a
reason from `memmesh.common.v1.ErrorReason`. The runtime maps them to gRPC statuses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

# Statuses whose cause is the request, not the callee's health: passed through unchanged
# when a peer answers with one, never turned into "try again" (UNAVAILABLE).
CALLER_STATUSES = frozenset(
    {
        "INVALID_ARGUMENT",
        "FAILED_PRECONDITION",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "ABORTED",
        "OUT_OF_RANGE",
        "PERMISSION_DENIED",
        "UNAUTHENTICATED",
    }
)


class DomainError(Exception):
    """Base of errors raised on purpose; `status` is a gRPC status code name."""

    status: ClassVar[str] = "INTERNAL"
    reason: str = "INTERNAL"

    def __init__(
        self, message: str, *, reason: str | None = None, metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        # Carried in ErrorInfo.metadata, e.g. {"engine": "thread_store"} for a failed dependency.
        self.metadata = dict(metadata or {})
        if reason is not None:
            self.reason = reason

    @property
    def status_name(self) -> str:
        """The status code name this error is answered with."""
        return self.status


@dataclass(frozen=True)
class FieldViolation:
    """One bad field, named by its dotted path in the request."""

    field: str
    description: str


class InvalidInput(DomainError):
    status = "INVALID_ARGUMENT"
    reason = "INVALID_FIELD"

    def __init__(self, violations: list[FieldViolation]) -> None:
        names = ", ".join(v.field for v in violations)
        super().__init__(f"invalid field(s): {names}")
        self.violations = violations


class NotFound(DomainError):
    status = "NOT_FOUND"
    reason = "NOT_FOUND"


class Conflict(DomainError):
    status = "ALREADY_EXISTS"
    reason = "IDEMPOTENCY_CONFLICT"


class VersionMismatch(DomainError):
    status = "ABORTED"
    reason = "VERSION_MISMATCH"


class PreconditionFailed(DomainError):
    status = "FAILED_PRECONDITION"
    reason = "FAILED_PRECONDITION"


class Unauthenticated(DomainError):
    status = "UNAUTHENTICATED"
    reason = "UNAUTHENTICATED"


class PermissionDenied(DomainError):
    status = "PERMISSION_DENIED"
    reason = "TENANT_MISMATCH"


class DeadlineExpired(DomainError):
    status = "DEADLINE_EXCEEDED"
    reason = "DEADLINE_EXPIRED"


class DependencyFailed(DomainError):
    """A peer engine failed a call. `engine` is the engine at fault (the innermost one
    when the peer itself failed because of another), `peer_status` what it answered."""

    status = "UNAVAILABLE"
    reason = "DEPENDENCY_FAILED"

    def __init__(
        self,
        engine: str,
        peer_status: str,
        message: str = "",
        *,
        peer_reason: str = "",
        violations: list[FieldViolation] | None = None,
    ) -> None:
        timed_out = peer_status == "DEADLINE_EXCEEDED"
        super().__init__(
            f"{engine}: {message or peer_status}",
            reason="DEPENDENCY_TIMEOUT"
            if timed_out
            else (
                peer_reason
                if peer_status in CALLER_STATUSES and peer_reason
                else "DEPENDENCY_FAILED"
            ),
            metadata={"engine": engine, "peer_status": peer_status},
        )
        self.engine = engine
        self.peer_status = peer_status
        # The fields the peer named when it refused the request (INVALID_ARGUMENT).
        self.violations = list(violations or [])

    @property
    def timed_out(self) -> bool:
        """The peer ran out of the caller's time."""
        return self.peer_status == "DEADLINE_EXCEEDED"

    @property
    def caused_by_input(self) -> bool:
        """The peer refused the request itself; retrying the same request cannot help."""
        return self.peer_status in CALLER_STATUSES

    @property
    def status_name(self) -> str:
        # A peer's verdict on the input travels back unchanged; a deadline stays a deadline.
        if self.caused_by_input or self.timed_out:
            return self.peer_status
        return "UNAVAILABLE"
