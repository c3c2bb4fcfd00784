"""Ledger events of rule changes: reason-coded, ids and keyed hashes only, never the target
text (the Ledger writer stores the target as an HMAC under the user's subject key)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from memmesh.engines.exposure_guard.domain.rules import RuleId
from memmesh.ledger_event import Linkable

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
    target: Linkable
    idempotency_key: str
    occur_time_us: int


def rule_event(
    event_type: str, tenant_id: str, user_id: str, rule: RuleId, reason_code: str, now_us: int
) -> RuleEvent:
    """The event of a change; its idempotency key is derived from the request, so a retry
    of the same request is recorded once (the writer stores only its HMAC)."""
    reason = reason_code or DEFAULT_REASON
    digest = hashlib.sha256(rule.target.encode()).hexdigest()
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
        event_type,
        reason,
        rule.kind.value,
        rule.target_type.name,
        Linkable(rule.target),
        key,
        now_us,
    )


RULES_FORGOTTEN = "EXPOSURE_RULES_FORGOTTEN"
FORGET_REASON = "USER_FORGET_EVERYTHING"


@dataclass(frozen=True)
class ForgetEvent:
    """The fact that a user's rules were forgotten: how many, never which."""

    removed_rule_count: int
    idempotency_key: str
    occur_time_us: int


def forget_event(tenant_id: str, user_id: str, removed: int, now_us: int) -> ForgetEvent:
    """The event of a ForgetUser; a retry of the same request (same now) is recorded once."""
    request = "\x1f".join((RULES_FORGOTTEN, tenant_id, user_id, str(now_us)))
    key = "exposure:" + hashlib.sha256(request.encode()).hexdigest()[:48]
    return ForgetEvent(removed, key, now_us)
