"""The Observer and the Reflector at work in the ThreadStore (seed 004).

When a session closes, the Observer reads its speakable turns (one conversation, never
mixed) and the Reflector condenses the observations of every session of its topic thread
with the thread's fields into the thread's summary and "where we left off". The model is
asked only in `semantic_with_fallback` mode and past the token thresholds; the rules answer
otherwise and whenever the model's answer fails its checks. With a model the work runs in
the background and a session close never waits for it.

A result is stored only if what it was made from is still what the store holds (the hash
of the session's turns, of the thread's fields and observations): a turn redacted or a
session forgotten meanwhile makes it go unstored, so nothing forgotten comes back through
it. Every erasure deletes the observations and reflection the erased words fed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from memmesh.engines.thread_store.domain.model import (
    Digest,
    Role,
    SessionObservations,
    ThreadReflection,
    Turn,
)
from memmesh.engines.thread_store.domain.summary import DIGEST_WINDOW_TURNS
from memmesh.engines.thread_store.ports import ThreadStore, UserTx
from memmesh.engines.thread_store.threads import read_thread
from memmesh.observation import (
    ConversationObservations,
    ObservationSettings,
    ObservedTurn,
    Observer,
    Reflector,
    ThreadState,
)
from memmesh.observation.canonical import content_hash
from memmesh.observation.guardrails import Provider
from memmesh.policy.sensitivity import Exposure

log = logging.getLogger(__name__)

# Sessions observed at once in the background (each may wait on the model).
CONCURRENT_RUNS = 4


def _turns_hash(turns: Sequence[Turn]) -> str:
    return content_hash([[t.turn_id, int(t.role), t.text, t.time_us] for t in turns])


def thread_state(thread: Digest) -> ThreadState:
    return ThreadState(
        thread_id=thread.thread_id,
        title=thread.title,
        key_entities=thread.key_entities,
        last_decisions=thread.last_decisions,
        unresolved_questions=thread.unresolved_questions,
        next_step=thread.next_step,
    )


def _reflection_input(
    state: ThreadState, observed: dict[str, SessionObservations]
) -> tuple[list[ConversationObservations], str]:
    batches = [
        ConversationObservations(state.thread_id, session_id, observed[session_id].observations)
        for session_id in sorted(observed)
    ]
    source = content_hash(
        [
            [state.title, list(state.key_entities), list(state.last_decisions)],
            [list(state.unresolved_questions), state.next_step],
            [[b.conversation_id, observed[b.conversation_id].source_hash] for b in batches],
        ]
    )
    return batches, source


class Observing:
    """Observes closed sessions and reflects their threads, storing what still holds."""

    def __init__(
        self,
        store: ThreadStore,
        settings: ObservationSettings,
        provider: Provider | None = None,
    ) -> None:
        self._store = store
        self._semantic = settings.mode == "semantic_with_fallback"
        rules = settings.model_copy(update={"mode": "deterministic_only"})
        self._observer, self._rules_observer = Observer(settings, provider), Observer(rules)
        self._reflector, self._rules_reflector = Reflector(settings, provider), Reflector(rules)
        self._running: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(CONCURRENT_RUNS)

    async def session_closed(self, tenant_id: str, user_id: str, session_id: str) -> None:
        """Observe the session and reflect its thread: now with the rules only, in the
        background when a model may answer."""
        await self._start(tenant_id, user_id, session_id, "")

    async def thread_changed(self, tenant_id: str, user_id: str, topic_id: str) -> None:
        """Reflect the thread again (a session of it was forgotten)."""
        await self._start(tenant_id, user_id, "", topic_id)

    async def _start(self, tenant_id: str, user_id: str, session_id: str, topic_id: str) -> None:
        """Run now with the rules only; in the background when a model may answer."""
        if not self._semantic:
            await self._run(tenant_id, user_id, session_id, topic_id)
            return
        task = asyncio.create_task(self._queued(tenant_id, user_id, session_id, topic_id))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def settled(self) -> None:
        """Wait for the runs under way."""
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*list(self._running), return_exceptions=True)

    async def _queued(self, tenant_id: str, user_id: str, session_id: str, topic_id: str) -> None:
        async with self._slots:
            await self._run(tenant_id, user_id, session_id, topic_id)

    async def _run(self, tenant_id: str, user_id: str, session_id: str, topic_id: str) -> None:
        try:
            if session_id:
                await self._observe(tenant_id, user_id, session_id)
                async with self._store.read(tenant_id, user_id) as tx:
                    topic_id = (await tx.topic_members()).get(session_id, "")
            if topic_id:
                await self._reflect(tenant_id, user_id, topic_id)
        except Exception:
            # The thread keeps its merged digest; the next close observes and reflects again.
            log.warning("observing or reflecting a thread failed", exc_info=True)

    async def _observe(self, tenant_id: str, user_id: str, session_id: str) -> None:
        async with self._store.read(tenant_id, user_id) as tx:
            turns = await _speakable_turns(tx, session_id)
        observed = [
            ObservedTurn(
                session_id,
                t.turn_id,
                "user" if t.role == Role.USER else "assistant",
                t.text,
                t.time_us,
            )
            for t in turns
        ]
        semantic = self._semantic and self._observer.planner.should_observe(observed)
        observer = self._observer if semantic else self._rules_observer
        # A session with nothing speakable is observed as saying nothing.
        results = await observer.observe(session_id, observed) if observed else ()
        source = _turns_hash(turns)
        async with self._store.write(tenant_id, user_id) as tx:
            # Forgotten meanwhile, or changed: whatever changed it has its own run.
            gone = await tx.digest(session_id) is None
            if gone or _turns_hash(await _speakable_turns(tx, session_id)) != source:
                return
            await tx.save_observations(
                SessionObservations(
                    session_id,
                    source,
                    tuple(o for result in results for o in result.observations),
                    tuple(result.provenance for result in results),
                )
            )

    async def _reflect(self, tenant_id: str, user_id: str, topic_id: str) -> None:
        async with self._store.read(tenant_id, user_id) as tx:
            made = await self._reflection_input(tx, topic_id)
        if made is None:
            return
        state, batches, source = made
        observations = [o for batch in batches for o in batch.observations]
        semantic = self._semantic and self._observer.planner.should_reflect(observations)
        reflector = self._reflector if semantic else self._rules_reflector
        reflection = await reflector.reflect(state, batches)
        async with self._store.write(tenant_id, user_id) as tx:
            now = await self._reflection_input(tx, topic_id)
            if now is None or now[2] != source:
                return
            await tx.save_reflection(
                ThreadReflection(
                    topic_id,
                    source,
                    reflection.summary,
                    reflection.left_off,
                    reflection.provenance,
                )
            )

    @staticmethod
    async def _reflection_input(
        tx: UserTx, topic_id: str
    ) -> tuple[ThreadState, list[ConversationObservations], str] | None:
        """The thread's fields, its sessions' observations and the hash of both; None while a
        session of it has not been observed (its reflection waits for that)."""
        thread = await read_thread(tx, topic_id, reflected=False)
        if thread is None:
            return None
        observed = await tx.observations_of(thread.session_ids)
        if set(observed) != set(thread.session_ids):
            return None
        state = thread_state(thread)
        batches, source = _reflection_input(state, observed)
        return state, batches, source


async def _speakable_turns(tx: UserTx, session_id: str) -> list[Turn]:
    return await tx.session_turns(
        session_id, DIGEST_WINDOW_TURNS, max_exposure=Exposure.SAFE_TO_SPEAK
    )
