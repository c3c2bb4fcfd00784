"""Runs queued effects on other engines; what fails stays queued and is retried on the next call."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from memmesh.engines.atom_extractor.domain.capsule import AtomStatus, Effect, EffectKind
from memmesh.engines.atom_extractor.ports import CapsuleStore, Dependencies
from memmesh.errors import DependencyFailed

_log = logging.getLogger(__name__)
DRAIN_BATCH = 200
# Effects of one dependency run in queue order; different dependencies run side by side.
_LANES = {
    EffectKind.LEDGER_APPEND: "ledger",
    EffectKind.INDEX_UPSERT: "index",
    EffectKind.INDEX_REMOVE: "index",
    EffectKind.GUARD_RULE: "guard",
    EffectKind.STATE_APPLY: "state",
    EffectKind.THREAD_FORGET: "threads",
    EffectKind.THREAD_RESTRICT: "threads",
}


class EffectRunner:
    """Drains one user's queued effects through the outbound ports."""

    def __init__(self, store: CapsuleStore, dependencies: Dependencies) -> None:
        self._store = store
        self._deps = dependencies

    async def drain(self, tenant_id: str, user_id: str) -> int:
        """Run what is queued for the user; return how many effects are still pending."""
        pending = await self._store.pending_effects(tenant_id, user_id, DRAIN_BATCH)
        if not pending:
            return 0
        lanes: dict[str, list[tuple[int, Effect]]] = {}
        for sequence, effect in pending:
            lanes.setdefault(_LANES[effect.kind], []).append((sequence, effect))
        finished = await asyncio.gather(
            *(self._run_lane(tenant_id, user_id, items) for _, items in sorted(lanes.items()))
        )
        await self._store.complete_effects(
            tenant_id, user_id, sorted(s for done in finished for s in done)
        )
        return await self._store.count_pending(tenant_id, user_id)

    async def _run_lane(
        self, tenant_id: str, user_id: str, items: Sequence[tuple[int, Effect]]
    ) -> list[int]:
        done = []
        for sequence, effect in items:
            try:
                await self._run(tenant_id, user_id, effect)
            except Exception as failure:  # noqa: BLE001 - what the peer may yet accept stays queued
                if not (isinstance(failure, DependencyFailed) and failure.caused_by_input):
                    _log.info("effect %s deferred: %s", effect.kind.value, type(failure).__name__)
                    break
                # The peer refused the request itself: sending it again cannot succeed.
                _log.warning("effect %s refused for good, dropped: %s", effect.kind.value, failure)
            done.append(sequence)
        return done

    async def _run(self, tenant_id: str, user_id: str, effect: Effect) -> None:
        payload = effect.payload
        match effect.kind:
            case EffectKind.LEDGER_APPEND:
                await self._deps.ledger.append(tenant_id, user_id, payload["events"])  # type: ignore[arg-type]
            case EffectKind.INDEX_REMOVE:
                await self._deps.index.remove(tenant_id, user_id, payload["atom_ids"])  # type: ignore[arg-type]
            case EffectKind.INDEX_UPSERT:
                wanted = set(payload["atom_ids"])  # type: ignore[call-overload]
                # The current state is sent, so a forget queued later never resurrects content.
                atoms = [
                    a
                    for a in await self._store.load_atoms(tenant_id, user_id)
                    if a.atom_id in wanted and a.status is not AtomStatus.SUPERSEDED
                ]
                if atoms:
                    await self._deps.index.upsert(tenant_id, user_id, atoms)
            case EffectKind.GUARD_RULE:
                await self._deps.guard.set_rule(
                    tenant_id,
                    user_id,
                    str(payload["kind"]),
                    str(payload["target_type"]),
                    str(payload["target"]),
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.STATE_APPLY:
                await self._deps.state.apply_command(
                    tenant_id,
                    user_id,
                    str(payload["command"]),
                    str(payload["idempotency_key"]),
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.THREAD_FORGET:
                await self._deps.threads.forget_thread(
                    tenant_id,
                    user_id,
                    str(payload["thread_id"]),
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.THREAD_RESTRICT:
                await self._deps.threads.restrict_turns(
                    tenant_id,
                    user_id,
                    list(payload["turn_ids"]),  # type: ignore[call-overload]
                    str(payload["exposure"]),
                )
