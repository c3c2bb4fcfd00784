"""The inbound deadline of the RPC being served, for outbound calls to inherit."""

from __future__ import annotations

import contextvars
import time

# Monotonic time by which the inbound RPC must answer; None outside a deadline.
_inbound_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "memmesh_inbound_deadline", default=None
)

# Time kept back from each hop so the caller still has time to handle a failure.
HOP_MARGIN_S = 0.001


def set_inbound_deadline(remaining_s: float | None) -> None:
    """Remember the time left of the RPC being served."""
    _inbound_deadline.set(None if remaining_s is None else time.monotonic() + remaining_s)


def outbound_timeout(default_s: float) -> float:
    """Timeout for an outbound call: the inbound time left (less a margin), else the default."""
    deadline = _inbound_deadline.get()
    if deadline is None:
        return default_s
    return max(deadline - time.monotonic() - HOP_MARGIN_S, 0.0)
