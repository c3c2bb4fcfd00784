"""The outbox: queue effects durably, deliver them through handlers registered per kind.

Effects of one (tenant, user, lane) are delivered one at a time in the order they were
queued. A failed attempt is retried with exponential backoff; an effect that cannot
succeed (its peer refused the input, or the attempts ran out) moves to the dead letters
and the effects behind it go on. Handlers must be idempotent: a crash between delivery
and removal, or a key queued again after delivery, delivers an effect twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from memmesh.errors import DependencyFailed
from memmesh.outbox.effects import (
    DeadEffect,
    Done,
    Effect,
    EffectRejected,
    QueuedEffect,
    RetryPolicy,
)
from memmesh.outbox.observe import (
    ATTR_ERROR,
    ATTR_OUTCOME,
    DELIVERED,
    FAILED,
    StatusCode,
    delivery_span,
)
from memmesh.outbox.queue import Claim, EffectQueue, PurgeFilter
from memmesh.runtime.metrics import Instruments, instruments, metrics_enabled
from memmesh.runtime.telemetry import tracing_enabled
from memmesh.storage.sql import Database

log = logging.getLogger("memmesh.outbox")

# A handler gets the effect and the deadline of this attempt in seconds.
Handler = Callable[[QueuedEffect, float], Awaitable[object]]
LaneKey = tuple[str, str, str]

# Why an effect was given up, as kept in the dead letters.
NO_HANDLER = "NO_HANDLER"
ATTEMPTS_EXHAUSTED = "ATTEMPTS_EXHAUSTED"
REFUSED = "REFUSED"


def wall_clock_us() -> int:
    """Microseconds since the epoch: schedules outlive processes."""
    return time.time_ns() // 1000


@dataclass(frozen=True)
class Delivery:
    """What one immediate delivery did: results by effect key, and the keys of the user
    still queued afterwards (failed attempts wait for the background drainer)."""

    results: Mapping[str, object]
    pending: frozenset[str]


@dataclass
class _Tally:
    """What one delivery call did, across its lanes."""

    results: dict[str, object] = field(default_factory=dict)
    dead: set[str] = field(default_factory=set)
    follow_ups: set[str] = field(default_factory=set)
    # Keys whose first attempt may take all the time left, not just one attempt's share.
    patient: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Outcome:
    delivered: bool
    result: object = None
    follow_ups: tuple[Effect, ...] = ()
    error: str = ""
    permanent: bool = False
    # A bounded word for spans and metrics (a status or a class name, never a message).
    code: str = ""


class Outbox:
    """A durable per-user queue of effects and its background drainer."""

    def __init__(
        self,
        database: Database,
        handlers: Mapping[str, Handler],
        policy: RetryPolicy | None = None,
        clock_us: Callable[[], int] = wall_clock_us,
        meters: Instruments | None = None,
    ) -> None:
        self._queue = EffectQueue(database)
        # Explicit instruments are always recorded (tests); the process's only when exported.
        self._given_meters = meters
        self._handlers = dict(handlers)
        self._policy = policy or RetryPolicy()
        self._now_us = clock_us
        self._lanes: dict[LaneKey, tuple[asyncio.Lock, list[int]]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- queueing and immediate delivery ------------------------------------------------

    async def enqueue(self, tenant_id: str, user_id: str, effects: Sequence[Effect]) -> None:
        """Queue effects durably for the background drainer."""
        await self._queue.enqueue(tenant_id, user_id, effects, self._now_us())
        self._wake.set()

    async def enqueue_and_deliver(
        self,
        tenant_id: str,
        user_id: str,
        effects: Sequence[Effect],
        timeout_s: float,
        patient: frozenset[str] = frozenset(),
    ) -> Delivery:
        """Queue effects durably, then make the first attempt now (within `timeout_s`) on
        their lanes, follow-ups included; what fails stays queued for the drainer. An effect
        whose key is in `patient` may use all of `timeout_s` for its first attempt (one the
        caller must see done before it answers), others one attempt's timeout."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        lanes = sorted({effect.lane for effect in effects})
        tally = _Tally(patient=patient)
        held_lanes: set[LaneKey] = set()
        async with contextlib.AsyncExitStack() as held:
            # The lanes are held before the effects exist, so the drainer never takes them first.
            for lane in lanes:
                if not await self._hold(held, held_lanes, (tenant_id, user_id, lane), deadline):
                    break
            mine = tuple(lane for lane in lanes if (tenant_id, user_id, lane) in held_lanes)
            heads = await self._queue.enqueue(
                tenant_id, user_id, effects, self._now_us(), self._claim(mine, True)
            )
            await self._deliver_with_follow_ups(
                held,
                held_lanes,
                [((tenant_id, user_id, lane), head) for lane, head in heads.items()],
                deadline,
                tally,
            )
        done = tally.results.keys() | tally.dead
        pending = frozenset(
            key for key in ({e.key for e in effects} | tally.follow_ups) if key not in done
        )
        if pending:
            self._wake.set()
        return Delivery(tally.results, pending)

    async def deliver_queued(
        self,
        tenant_id: str,
        user_id: str,
        timeout_s: float,
        *,
        lanes: Collection[str] | None = None,
        patient: bool = False,
    ) -> int:
        """Deliver what the user has queued now (effects still backing off included) within
        `timeout_s`, as a caller that must not answer before they are through does: in
        `lanes` only, when given, and with `patient` each queued effect's attempt may take
        all the time left (not one background attempt's deadline). How many of the user's
        effects (in those lanes) are still pending afterwards."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        queued = [
            effect
            for effect in await self._queue.pending(tenant_id, user_id)
            if lanes is None or effect.lane in lanes
        ]
        tally = _Tally(patient=frozenset(e.key for e in queued) if patient else frozenset())
        held_lanes: set[LaneKey] = set()
        async with contextlib.AsyncExitStack() as held:
            todo: list[tuple[LaneKey, QueuedEffect | None]] = []
            for lane in sorted({effect.lane for effect in queued}):
                key = (tenant_id, user_id, lane)
                if await self._hold(held, held_lanes, key, deadline):
                    todo.append((key, None))
            await self._deliver_with_follow_ups(held, held_lanes, todo, deadline, tally)
        if lanes is None:
            pending = await self._queue.count_pending(tenant_id, user_id)
        else:
            remaining = await self._queue.pending(tenant_id, user_id)
            pending = sum(1 for effect in remaining if effect.lane in lanes)
        if pending:
            self._wake.set()
        return pending

    async def _deliver_with_follow_ups(
        self,
        held: contextlib.AsyncExitStack,
        held_lanes: set[LaneKey],
        lanes: Sequence[tuple[LaneKey, QueuedEffect | None]],
        deadline: float,
        tally: _Tally,
    ) -> None:
        """Deliver held lanes, then the lanes their follow-ups went to (taken as they come)."""
        follow_up_lanes = await self._deliver_lanes(lanes, deadline, tally)
        while follow_up_lanes:
            todo: list[tuple[LaneKey, QueuedEffect | None]] = []
            tenant_id, user_id, _ = lanes[0][0]
            for lane in sorted(follow_up_lanes):
                key = (tenant_id, user_id, lane)
                if key in held_lanes or await self._hold(held, held_lanes, key, deadline):
                    todo.append((key, None))
            follow_up_lanes = await self._deliver_lanes(todo, deadline, tally)

    async def _deliver_lanes(
        self, lanes: Sequence[tuple[LaneKey, QueuedEffect | None]], deadline: float, tally: _Tally
    ) -> set[str]:
        """Deliver held lanes side by side; the lanes their follow-ups went to."""
        found = await asyncio.gather(
            *(
                self._deliver_lane(key, deadline, early=True, tally=tally, first=head)
                for key, head in lanes
            )
        )
        return set().union(*found)

    # -- operator views -------------------------------------------------------------------

    async def pending(self, tenant_id: str, user_id: str) -> list[QueuedEffect]:
        """The user's queued effects, in order."""
        return await self._queue.pending(tenant_id, user_id)

    async def dead(self, tenant_id: str, user_id: str) -> list[DeadEffect]:
        """The user's dead effects with the reason each was given up."""
        return await self._queue.dead(tenant_id, user_id)

    async def count_pending(self, tenant_id: str, user_id: str, kind: str | None = None) -> int:
        """How many of the user's effects (of one kind, when given) wait."""
        return await self._queue.count_pending(tenant_id, user_id, kind)

    async def purge(self, tenant_id: str, user_id: str) -> None:
        """Drop the user's queued and dead effects (forgetting a user)."""
        await self._queue.purge(tenant_id, user_id)

    async def purge_matching(self, tenant_id: str, user_id: str, which: PurgeFilter) -> int:
        """Drop the user's queued and dead effects the filter matches (a forget of some of
        what they said); how many were dropped."""
        return await self._queue.purge_matching(tenant_id, user_id, which)

    async def tally(self, tenant_id: str, user_id: str) -> list[tuple[str, str, int]]:
        """The user's effects as (state, kind, count): state "pending" or "dead"."""
        return await self._queue.tally(tenant_id, user_id)

    # -- the background drainer -------------------------------------------------------------

    def start(self) -> None:
        """Run the drainer in the background until `stop`."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="outbox-drainer")

    async def stop(self) -> None:
        """Stop the drainer; what is queued stays queued for the next start."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        meters = self._meters()
        if meters is not None:
            meters.drop_outbox(self)

    def _meters(self) -> Instruments | None:
        if self._given_meters is not None:
            return self._given_meters
        return instruments() if metrics_enabled() else None

    async def report_depth(self) -> None:
        """Tell the depth gauge how many effects wait and how many are dead (when exported)."""
        meters = self._meters()
        if meters is not None:
            pending, dead = await self._queue.depth()
            meters.set_outbox_depth(self, pending, dead)

    async def run_once(self) -> int:
        """Deliver every lane whose first effect is due; how many effects were delivered."""
        lanes = await self._queue.due_lanes(self._now_us(), self._policy.batch)
        gate = asyncio.Semaphore(self._policy.concurrency)
        tally = _Tally()

        async def drain(key: LaneKey) -> None:
            async with gate, self._lane(key):
                await self._deliver_lane(key, None, early=False, tally=tally)

        await asyncio.gather(*(drain(key) for key in dict.fromkeys(lanes)))
        return len(tally.results)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self.run_once()
                await self.report_depth()
                next_us = await self._queue.next_due_us()
            except Exception:
                log.exception("outbox pass failed")
                next_us = None
            sleep_s = self._policy.idle_poll_s
            if next_us is not None:
                sleep_s = min(max((next_us - self._now_us()) / 1e6, 0.0), sleep_s)
            if sleep_s > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=sleep_s)

    # -- delivery of one lane ---------------------------------------------------------------

    def _claim(self, lanes: tuple[str, ...], early: bool) -> Claim:
        return Claim(lanes, int(self._policy.lease_s * 1e6), early)

    async def _deliver_lane(
        self,
        key: LaneKey,
        deadline: float | None,
        *,
        early: bool,
        tally: _Tally,
        first: QueuedEffect | None = None,
    ) -> set[str]:
        """Deliver the lane's effects in order (the caller holds the lane; `first`, when
        given, is its first effect already claimed) until one must wait; `early` also
        attempts a first effect still backing off, without counting its failure. Returns
        the lanes that delivered effects queued follow-ups on."""
        tenant_id, user_id, lane = key
        claim = self._claim((lane,), early)
        follow_up_lanes: set[str] = set()
        loop = asyncio.get_running_loop()
        effect = first or await self._queue.claim_head(
            tenant_id, user_id, lane, self._now_us(), claim
        )
        while effect is not None:
            timeout_s = self._policy.attempt_timeout_s
            if deadline is not None:
                if effect.key in tally.patient:
                    timeout_s = deadline - loop.time()
                timeout_s = min(timeout_s, deadline - loop.time())
                if timeout_s <= 0:
                    # Out of time with the effect claimed: it goes back as it was.
                    await self._queue.reschedule(
                        effect, effect.attempts, effect.next_attempt_us, effect.last_error
                    )
                    break
            now_us = self._now_us()
            outcome = await self._attempt(effect, timeout_s)
            if outcome.delivered:
                tally.results[effect.key] = outcome.result
                tally.follow_ups.update(e.key for e in outcome.follow_ups)
                follow_up_lanes.update(e.lane for e in outcome.follow_ups)
                effect = await self._queue.complete(
                    effect, outcome.follow_ups, self._now_us(), claim
                )
                continue
            attempts = effect.attempts + 1
            if outcome.permanent or attempts >= self._policy.max_attempts:
                why = (
                    outcome.error if outcome.permanent else f"{ATTEMPTS_EXHAUSTED}: {outcome.error}"
                )
                log.warning(
                    "outbox effect dead kind=%s key=%s attempts=%d why=%s",
                    effect.kind,
                    effect.key,
                    attempts,
                    why,
                )
                await self._queue.bury(effect, attempts, why, self._now_us())
                tally.dead.add(effect.key)
                meters = self._meters()
                if meters is not None:
                    reason = outcome.code if outcome.permanent else ATTEMPTS_EXHAUSTED
                    meters.outbox_dead_letters.add(1, {"kind": effect.kind, "reason": reason})
                effect = await self._queue.claim_head(
                    tenant_id, user_id, lane, self._now_us(), claim
                )
                continue
            if effect.next_attempt_us > now_us:
                # An early attempt of an effect still backing off: its schedule stands.
                await self._queue.reschedule(
                    effect, effect.attempts, effect.next_attempt_us, outcome.error
                )
            else:
                next_us = self._now_us() + int(self._policy.backoff_s(attempts) * 1e6)
                await self._queue.reschedule(effect, attempts, next_us, outcome.error)
            log.info(
                "outbox effect waits kind=%s attempts=%d error=%s",
                effect.kind,
                attempts,
                outcome.error,
            )
            break
        return follow_up_lanes

    async def _attempt(self, effect: QueuedEffect, timeout_s: float) -> _Outcome:
        """One delivery attempt, as a span linked to the call that queued the effect (a
        later delivery by the drainer is its own trace, linked to the turn's)."""
        if not tracing_enabled():
            outcome = await self._try(effect, timeout_s)
        else:
            with delivery_span(effect) as span:
                outcome = await self._try(effect, timeout_s)
                span.set_attribute(ATTR_OUTCOME, DELIVERED if outcome.delivered else FAILED)
                if not outcome.delivered:
                    span.set_attribute(ATTR_ERROR, outcome.code)
                    span.set_status(StatusCode.ERROR)
        meters = self._meters()
        if meters is not None:
            outcome_word = DELIVERED if outcome.delivered else FAILED
            meters.outbox_deliveries.add(1, {"kind": effect.kind, "outcome": outcome_word})
        return outcome

    async def _try(self, effect: QueuedEffect, timeout_s: float) -> _Outcome:
        handler = self._handlers.get(effect.kind)
        if handler is None:
            return _Outcome(
                False, error=f"{NO_HANDLER}: {effect.kind}", permanent=True, code=NO_HANDLER
            )
        try:
            # A little grace over the handler's own deadline, so its peer's answer wins the race.
            result = await asyncio.wait_for(handler(effect, timeout_s), timeout_s + 0.5)
        except DependencyFailed as error:
            return _Outcome(
                False,
                error=f"{error.engine}:{error.peer_status}",
                permanent=error.caused_by_input,
                code=error.peer_status,
            )
        except EffectRejected as error:
            return _Outcome(False, error=f"{REFUSED}: {error}", permanent=True, code=REFUSED)
        except Exception as error:  # anything else may pass: retried, up to the cap
            return _Outcome(False, error=type(error).__name__, code=type(error).__name__)
        if isinstance(result, Done):
            return _Outcome(True, result.result, tuple(result.then))
        return _Outcome(True, result)

    # -- per-lane locks within this process ---------------------------------------------------

    @contextlib.asynccontextmanager
    async def _lane(self, key: LaneKey) -> AsyncIterator[None]:
        lock, users = self._lanes.setdefault(key, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._lanes[key]

    async def _hold(
        self, held: contextlib.AsyncExitStack, lanes: set[LaneKey], key: LaneKey, deadline: float
    ) -> bool:
        """Take the lane until `held` closes, waiting no later than the deadline."""
        remaining = deadline - asyncio.get_running_loop().time()
        try:
            await asyncio.wait_for(
                held.enter_async_context(self._lane(key)), timeout=max(remaining, 0.001)
            )
        except TimeoutError:
            return False
        lanes.add(key)
        return True
