"""Ledger events of rule changes: reason-coded, ids and hashes only, never the target text."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from memmesh.engines.exposure_guard.domain.rules import RuleId

RULE_SET = "EXPOSURE_RULE_SET"
RULE_REMOVED = "EXPOSURE_RULE_REMOVED"
DEFAULT_REASON = "USER_COMMAND"


@dataclass(frozen=True)
class RuleEvent:
    """One rule change as the ledger records it."""

    event_type: str
    reason_code: str
    rule_kind: str
    target_type: str
    target_sha256: str
    idempotency_key: str
    occur_time_us: int


def target_sha256(target: str) -> str:
    """SHA-256 hex of the normalised target: lets a reader match a known target, never reveals one."""
    return hashlib.sha256(target.encode()).hexdigest()


def rule_event(
    event_type: str, tenant_id: str, user_id: str, rule: RuleId, reason_code: str, now_us: int
) -> RuleEvent:
    """The event of a change; its idempotency key is derived from the request, so a retry
    of the same request is recorded once."""
    reason = reason_code or DEFAULT_REASON
    digest = target_sha256(rule.target)
    request = "\x1f".join(
        (
            event_type,
            tenant_id,
            user_id,
            rule.kind.value,
            rule.target_type.name,
            digest,
            reason,
            str(now_us),
        )
    )
    key = "exposure:" + hashlib.sha256(request.encode()).hexdigest()[:48]
    return RuleEvent(
        event_type, reason, rule.kind.value, rule.target_type.name, digest, key, now_us
    )
