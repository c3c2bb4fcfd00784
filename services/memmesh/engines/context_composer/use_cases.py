"""The Compose use case: gather in parallel, filter, compose; degrade by tier (seed 003).

Tier 1 (CurrentState, the ThreadStore's session part, ExposureGuard): any failure fails
the whole call, so no caller ever receives a partial unfiltered bundle. Tier 2 (the
RetrievalRanker's pulled atoms, excerpts and digests, the episode bridge, graph entities,
correction pairs): a failure leaves the part out and names it in degraded_parts.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, replace
from functools import partial
from typing import TypeVar

from memmesh.engines.context_composer.domain.assemble import (
    ENTITY_FAN_OUT,
    ENTITY_LOOKUPS,
    MAX_ATOMS,
    MAX_WORKING_TURNS,
    RETRIEVE_DIGESTS,
    RETRIEVE_TURNS,
    Measure,
    compose_bundle,
    guard_plan,
    related_entities,
)
from memmesh.engines.context_composer.domain.model import (
    IN_SESSION,
    SESSION_START,
    Composed,
    ComposeQuery,
    Gathered,
    Retrieved,
    SessionContext,
)
from memmesh.engines.context_composer.domain.questions import DO_NOT_REPEAT_EVICTION_REASON
from memmesh.engines.context_composer.domain.text import entity_node_ids
from memmesh.engines.context_composer.ports import (
    Corrections,
    Guard,
    Ranker,
    StateSource,
    Threads,
)
from memmesh.errors import DependencyFailed
from memmesh.runtime.telemetry import user_pseudonym

log = logging.getLogger("memmesh.context_composer.turn")
T = TypeVar("T")


async def _tier2(call: Callable[[], Awaitable[T]]) -> T | None:
    # The call is made here, not by the caller: a compose cancelled before this task first
    # runs (its deadline passed) then leaves no call object that was never awaited.
    try:
        return await call()
    except DependencyFailed:
        return None


class Composer:
    """Builds one turn's bundle from the engines behind the ports."""

    def __init__(
        self,
        state: StateSource,
        ranker: Ranker,
        threads: Threads,
        guard: Guard,
        corrections: Corrections | None,
        measure: Measure,
    ) -> None:
        self._state = state
        self._ranker = ranker
        self._threads = threads
        self._guard = guard
        self._corrections = corrections
        self._measure = measure

    async def compose(self, query: ComposeQuery) -> Composed:
        """Gather, filter and compose; a Tier-1 failure raises its DependencyFailed as it is
        (it names the engine at fault; the runtime carries it in ErrorInfo)."""
        tenant, user = query.tenant_id, query.user_id
        named = entity_node_ids(query.query, ENTITY_LOOKUPS)
        # The ranker's call goes out first: it takes the longest.
        # Pending work is offered on a session start only; in session it is not read.
        retrieved, (facts, work), (query, context), corrections = await asyncio.gather(
            _tier2(
                partial(
                    self._ranker.retrieve,
                    tenant,
                    user,
                    query.query,
                    query.now_us,
                    MAX_ATOMS,
                    RETRIEVE_TURNS,
                    RETRIEVE_DIGESTS,
                )
            ),
            self._state.facts(tenant, user, with_pending_work=query.mode != IN_SESSION),
            self._session(query, named),
            _tier2(partial(self._corrections.corrections, tenant, user))
            if self._corrections
            else _none(),
        )
        degraded = _degraded_parts(
            retrieval_ranker=retrieved is None,
            episode_bridge=(query.mode == SESSION_START or bool(query.resume_thread_id))
            and context.resume is None,
            entities=context.entities is None,
            corrections=self._corrections is not None and corrections is None,
        )
        gathered = Gathered(
            facts,
            retrieved or Retrieved(),
            context.session,
            context.resume,
            corrections.pairs if corrections else (),
            related_entities(context.entities or (), named),
            corrections.vocabulary if corrections else (),
            context.tone,
            work,
        )
        plan = guard_plan(query, gathered)
        verdict = await self._guard.filter(
            tenant, user, query.channel, plan.items, plan.speak_text_allowed, plan.user_asked
        )
        composed = compose_bundle(query, gathered, plan, verdict, self._measure)
        composed = replace(composed, degraded_parts=degraded)
        log_turn(query, composed)
        return composed

    async def _session(
        self, query: ComposeQuery, named: Sequence[str]
    ) -> tuple[ComposeQuery, SessionContext]:
        """The session part in one ThreadStore call: the mode (decided there when the query
        leaves it open), working memory, on a session start the resume and the entities next
        to what the query names (resume and entities are Tier 2: None when they failed), and
        the learned tone."""
        context = await self._threads.session_context(
            query.tenant_id,
            query.user_id,
            query.session_id,
            MAX_WORKING_TURNS,
            query.now_us,
            query.mode,
            named,
            ENTITY_FAN_OUT,
            query.resume_thread_id,
        )
        return replace(query, mode=context.mode), context


async def _none() -> None:
    return None


def _degraded_parts(**failed: bool) -> tuple[str, ...]:
    """The names of the Tier-2 parts that failed, in a fixed order."""
    return tuple(part for part, failed_now in failed.items() if failed_now)


def turn_record(query: ComposeQuery, composed: Composed) -> str:
    """The per-turn measurement line: counts and pseudonymous ids only, never text; its
    fields are bounded (tenant id <= 64 chars, a few integers), so it stays under 1 KB."""
    record: dict[str, object] = {
        "event": "compose",
        "tenant": query.tenant_id,
        "user": user_pseudonym(query.tenant_id, query.user_id),
        "mode": query.mode,
        **asdict(composed.counters),
        "degraded_parts": list(composed.degraded_parts),
    }
    if composed.do_not_repeat_evicted:
        record["do_not_repeat_evicted"] = composed.do_not_repeat_evicted
        record["eviction_reason"] = DO_NOT_REPEAT_EVICTION_REASON
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def log_turn(query: ComposeQuery, composed: Composed) -> None:
    """Log the turn's measurement line (seed 001 §2.12)."""
    if log.isEnabledFor(logging.INFO):
        log.info(turn_record(query, composed))
