"""What an outbox holds: effects, their queued and dead forms, and the retry policy (pure)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Effect:
    """One thing to do after a write has been acknowledged.

    `key` is the idempotency key, unique per (tenant, user): enqueuing a key already
    queued does nothing. Effects of one (tenant, user, lane) are delivered in the order
    they were queued; different lanes (e.g. one per peer engine) do not wait for each other.
    """

    kind: str
    payload: bytes
    key: str
    lane: str = ""


@dataclass(frozen=True)
class StoredEffect:
    """An effect as the outbox stores it: whose, where in the user's order, how it went."""

    tenant_id: str
    user_id: str
    # Order of the user's effects (never reused while a row holds it).
    seq: int
    lane: str
    kind: str
    key: str
    payload: bytes
    # Scheduled attempts that failed so far.
    attempts: int
    # Wall-clock microseconds since the epoch.
    enqueued_us: int


@dataclass(frozen=True)
class QueuedEffect(StoredEffect):
    """An effect waiting in the outbox, as a handler receives it."""

    next_attempt_us: int
    last_error: str = ""
    # W3C traceparent of the call that queued it ('' when that call was not traced).
    trace_parent: str = ""


@dataclass(frozen=True)
class DeadEffect(StoredEffect):
    """An effect that failed for good, kept with the reason for an operator."""

    dead_us: int
    reason: str


@dataclass(frozen=True)
class Done:
    """What a handler may return instead of a bare result: the result, and effects to
    queue in the same transaction that removes the delivered one (a follow-up that needs
    the result, e.g. a profile fill after an extraction)."""

    result: object = None
    then: tuple[Effect, ...] = ()


class EffectRejected(Exception):
    """Raised by a handler when retrying cannot help (e.g. an undecodable payload)."""


@dataclass(frozen=True)
class RetryPolicy:
    """Attempt deadline, exponential backoff and the attempt cap of an outbox."""

    # Deadline of one attempt (the handler is given it to pass on to its peer).
    attempt_timeout_s: float = 0.5
    # Delay after the first failed attempt, doubled per further failure, capped.
    initial_backoff_s: float = 0.2
    max_backoff_s: float = 30.0
    # Scheduled attempts before an effect is moved to the dead letters.
    max_attempts: int = 100
    # Lanes the background drainer delivers at the same time.
    concurrency: int = 8
    # Longest idle sleep of the drainer (it also wakes when something is queued).
    idle_poll_s: float = 5.0
    # Rows fetched per drainer pass.
    batch: int = 100

    def backoff_s(self, attempts: int) -> float:
        """Delay before the next attempt after `attempts` failures."""
        return float(min(self.initial_backoff_s * 2 ** max(attempts - 1, 0), self.max_backoff_s))

    @property
    def lease_s(self) -> float:
        """How long a claimed effect is hidden from other drainers: a crashed
        deliverer's claim lapses after this."""
        return self.attempt_timeout_s * 2 + 5.0
