"""Fail-closed outcomes of a Brief: the reason code an answer carries, derived from the
error that names the engine at fault (its ErrorInfo crosses the composer hop)."""

from __future__ import annotations

from memmesh.errors import DeadlineExpired, DependencyFailed

BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
IDENTITY_UNVERIFIED = "IDENTITY_UNVERIFIED"
TIER1_UNAVAILABLE = "TIER1_UNAVAILABLE"
TIER2_DEGRADED = "TIER2_DEGRADED"


def reason_code(error: DependencyFailed | DeadlineExpired) -> str:
    """BUDGET_EXCEEDED when time ran out (the turn's budget or a peer's share of it),
    else TIER1_UNAVAILABLE:<engine at fault>."""
    if isinstance(error, DependencyFailed) and not error.timed_out:
        return f"{TIER1_UNAVAILABLE}:{error.engine}"
    return BUDGET_EXCEEDED
