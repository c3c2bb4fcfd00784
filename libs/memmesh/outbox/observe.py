"""The span of one delivery attempt: linked to the span of the call that queued the effect,
with its kind, lane, attempt and the user's pseudonym; never the payload."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from memmesh.outbox.effects import QueuedEffect
from memmesh.runtime.telemetry import ATTR_TENANT, ATTR_USER, link_to, user_pseudonym

__all__ = ["StatusCode", "delivery_span"]

SPAN_NAME = "memmesh.outbox/Deliver"
ATTR_KIND = "memmesh.outbox.kind"
ATTR_LANE = "memmesh.outbox.lane"
ATTR_ATTEMPT = "memmesh.outbox.attempt"
ATTR_OUTCOME = "memmesh.outbox.outcome"
ATTR_ERROR = "memmesh.outbox.error"
DELIVERED = "delivered"
FAILED = "failed"


@contextmanager
def delivery_span(effect: QueuedEffect) -> Iterator[Span]:
    """A consumer span around one attempt, current while the handler calls its peer."""
    link = link_to(effect.trace_parent)
    tracer = trace.get_tracer("memmesh.outbox")
    with tracer.start_as_current_span(
        SPAN_NAME,
        kind=SpanKind.CONSUMER,
        links=[link] if link is not None else None,
        attributes={
            ATTR_KIND: effect.kind,
            ATTR_LANE: effect.lane,
            ATTR_ATTEMPT: effect.attempts + 1,
            ATTR_TENANT: effect.tenant_id,
            ATTR_USER: user_pseudonym(effect.tenant_id, effect.user_id),
        },
        record_exception=False,
    ) as span:
        yield span
