"""ExposureGuard's port to the Ledger engine: rule changes appended through the kit's LedgerWriter."""

from __future__ import annotations

from memmesh.engines.exposure_guard.domain.events import (
    FORGET_REASON,
    RULES_FORGOTTEN,
    ForgetEvent,
    RuleEvent,
)
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.ledger_writer import LedgerWriter, NewEvent


def new_event(event: RuleEvent) -> NewEvent:
    """The Ledger's form of a rule change (ids, and the target as a keyed hash)."""
    return NewEvent(
        idempotency_key=event.idempotency_key,
        event_type=event.event_type,
        reason_code=event.reason_code,
        attributes=(
            ("rule_kind", event.rule_kind),
            ("target", event.target),
            ("target_type", event.target_type),
        ),
        occur_time_us=event.occur_time_us,
    )


class GrpcRuleLedger:
    """The RuleLedger port over a Ledger stub; the key stored with other content is a Conflict,
    any other failure a DependencyFailed naming the ledger."""

    def __init__(self, stub: pb_grpc.LedgerServiceStub) -> None:
        self._writer = LedgerWriter(stub)

    async def record(self, tenant_id: str, user_id: str, event: RuleEvent) -> None:
        """Append the event (a retried request finds its key stored and writes nothing)."""
        await self._writer.append(tenant_id, user_id, [new_event(event)])

    async def record_forget(self, tenant_id: str, user_id: str, event: ForgetEvent) -> None:
        """Append the forget (a count only; a retried request writes nothing)."""
        forgotten = NewEvent(
            idempotency_key=event.idempotency_key,
            event_type=RULES_FORGOTTEN,
            reason_code=FORGET_REASON,
            attributes=(("removed_rule_count", event.removed_rule_count),),
            occur_time_us=event.occur_time_us,
        )
        await self._writer.append(tenant_id, user_id, [forgotten])
