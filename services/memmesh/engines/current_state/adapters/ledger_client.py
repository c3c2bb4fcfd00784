"""Current State's port to the Ledger engine: appends through the kit's LedgerWriter,
replays state events page by page.

Profile fields a user speaks (display name, language, time zone) are sealed under the
user's subject key before they reach the chain and opened on replay; after the key is
shredded they open to nothing, so a rebuild finds those fields empty."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from memmesh.common.v1 import scope_pb2
from memmesh.engines.current_state import mapping
from memmesh.engines.current_state.adapters.work_order_store import event_of
from memmesh.engines.current_state.domain.state import STATE_EVENT_TYPE, Change, state_event
from memmesh.engines.current_state.ports import AppendedChange, LedgerRecord
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.ledger_event import NewEvent, Sealed
from memmesh.ledger_keys import SubjectKeyring, is_sealed
from memmesh.ledger_writer import SUBJECT_KEY_ATTRIBUTE, ExpectedHead, HeadMoved, LedgerWriter
from memmesh.outbox import EffectRejected, QueuedEffect
from memmesh.runtime.errors import Conflict, call_engine

# Events per Read call: a replay never holds more than this in memory or in one call's deadline.
READ_PAGE = 1000


# Changes whose "value" is the user's own words, and the fields a profile fill carries.
SEALED_VALUE_KINDS = frozenset({"display_name", "primary_language", "timezone"})
SEALED_FILL_KINDS = frozenset({"fill_profile"})


def sealed_event(event: NewEvent) -> NewEvent:
    """The event with the user's words marked Sealed (the writer encrypts them)."""
    kind = dict(event.attributes).get("change")
    if kind not in SEALED_VALUE_KINDS and kind not in SEALED_FILL_KINDS:
        return event
    attributes = tuple(
        (name, Sealed(value))
        if isinstance(value, str)
        and name != "change"
        and (kind in SEALED_FILL_KINDS or name == "value")
        else (name, value)
        for name, value in event.attributes
    )
    return replace(event, attributes=attributes)


def opened(event: pb.LedgerEvent, ring: SubjectKeyring | None) -> pb.LedgerEvent:
    """The event as the state fold reads it: sealed values opened (empty once their key is
    shredded) and the writer's subject_key_id left out."""
    plain = pb.LedgerEvent()
    plain.CopyFrom(event)
    del plain.attributes[:]
    for attribute in event.attributes:
        if attribute.name == SUBJECT_KEY_ATTRIBUTE:
            continue
        copy = plain.attributes.add()
        copy.CopyFrom(attribute)
        if attribute.WhichOneof("value") == "string_value" and is_sealed(attribute.string_value):
            text = ring.open(attribute.name, attribute.string_value) if ring else None
            copy.string_value = text or ""
    return plain


def _needs_key(event: pb.LedgerEvent) -> bool:
    return any(
        a.WhichOneof("value") == "string_value" and is_sealed(a.string_value)
        for a in event.attributes
    )


async def _collected(stream: AsyncIterator[pb.ReadResponse]) -> list[pb.ReadResponse]:
    return [reply async for reply in stream]


class GrpcStateLedger:
    """The StateLedger port over a Ledger stub."""

    def __init__(self, stub: pb_grpc.LedgerServiceStub) -> None:
        self._stub = stub
        self._writer = LedgerWriter(stub)

    async def append_change(
        self,
        tenant_id: str,
        user_id: str,
        change: Change,
        reason_code: str,
        idempotency_key: str,
        now_us: int,
        after_sequence: int | None = None,
    ) -> AppendedChange:
        event = sealed_event(state_event(change, reason_code, idempotency_key, now_us))
        if after_sequence is not None:
            head = ExpectedHead(STATE_EVENT_TYPE, after_sequence)
            try:
                [outcome] = await self._writer.append(
                    tenant_id, user_id, [event], expected_head=head
                )
            except HeadMoved:
                pass  # another state event is there: append all the same, the caller catches up
            else:
                return AppendedChange(outcome.sequence, outcome.duplicate, not outcome.duplicate)
        [outcome] = await self._writer.append(tenant_id, user_id, [event])
        return AppendedChange(outcome.sequence, outcome.duplicate)

    async def read_changes(
        self, tenant_id: str, user_id: str, after_sequence: int
    ) -> AsyncIterator[LedgerRecord]:
        scope = scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        next_sequence = after_sequence + 1
        # The key is fetched fresh, once per replay and only if a sealed value is met.
        ring: SubjectKeyring | None = None
        while True:
            request = pb.ReadRequest(scope=scope, from_sequence=next_sequence, limit=READ_PAGE)
            page = await call_engine("ledger", _collected(self._stub.Read(request)))
            for reply in page:
                if reply.event.event_type != STATE_EVENT_TYPE:
                    continue
                if ring is None and _needs_key(reply.event):
                    ring = await self._writer.keys.fetch(tenant_id, user_id)
                event = opened(reply.event, ring)
                yield LedgerRecord(event.sequence, mapping.change_of_event(event))
            if len(page) < READ_PAGE:
                return
            next_sequence = page[-1].event.sequence + 1

    async def append_work_order_event(self, queued: QueuedEffect, timeout_s: float) -> None:
        """The outbox's handler of a work order's event: append it (a retry is a duplicate)."""
        event = event_of(queued).ledger_event()
        try:
            await self._writer.append(queued.tenant_id, queued.user_id, [event])
        except Conflict as error:  # the key stored with other content: retrying cannot help
            raise EffectRejected(str(error)) from error
