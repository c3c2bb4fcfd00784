"""Fail-closed outcomes of a Brief: which reason code a failure gets."""

from __future__ import annotations

import re

import grpc

BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
IDENTITY_UNVERIFIED = "IDENTITY_UNVERIFIED"
TIER1_UNAVAILABLE = "TIER1_UNAVAILABLE"
# The composer names the Tier-1 engine that failed it: "tier1 <engine>: ...".
_COMPOSER_TIER1 = re.compile(r"tier1 ([a-z_]+):")


class BriefFailure(Exception):
    """A Tier-1 step of a Brief failed; the Brief answers an empty bundle with `reason_code`."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


def failure_reason(engine: str, code: grpc.StatusCode, details: str) -> str:
    """The reason code of a failed call: a deadline is the budget; anything else names the
    engine (for the composer, the Tier-1 engine behind it when it says which)."""
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return BUDGET_EXCEEDED
    behind = _COMPOSER_TIER1.search(details or "") if engine == "context_composer" else None
    return f"{TIER1_UNAVAILABLE}:{behind.group(1) if behind else engine}"
