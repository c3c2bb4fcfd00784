"""The extractor's effects on other engines, through the shared outbox (`memmesh.outbox`).

A capsule change queues its effects in the extractor's own database, in the transaction
that writes the change; the use case then makes the first attempt at once and the
background drainer retries what failed, with backoff, up to the attempt cap. An effect a
peer refuses for good goes to the dead letters and the effects behind it go on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memmesh.engines.atom_extractor.domain.capsule import AtomStatus, Effect, EffectKind
from memmesh.engines.atom_extractor.ports import AtomReader, Dependencies
from memmesh.errors import Conflict
from memmesh.ledger_event import AttributeValue, EventTime, Linkable, NewEvent, Sealed
from memmesh.outbox import Effect as QueuedForm
from memmesh.outbox import EffectRejected, Handler, QueuedEffect, RetryPolicy
from memmesh.outbox import Outbox as SharedOutbox
from memmesh.storage.sql import Database

# Effects of one dependency run in queue order; different dependencies run side by side.
LANES = {
    EffectKind.LEDGER_APPEND: "ledger",
    EffectKind.INDEX_UPSERT: "index",
    EffectKind.INDEX_REMOVE: "index",
    EffectKind.GUARD_RULE: "guard",
    EffectKind.GUARD_FORGET_USER: "guard",
    EffectKind.STATE_APPLY: "state",
    EffectKind.THREAD_FORGET: "threads",
    EffectKind.THREAD_RESTRICT: "threads",
    EffectKind.THREAD_REDACT: "threads",
    EffectKind.THREAD_FORGET_USER: "threads",
    EffectKind.THREAD_FORGET_TONE: "threads",
    EffectKind.THREAD_RETENTION: "threads",
    EffectKind.INDEX_FORGET_USER: "index",
    EffectKind.DEVICE_FORGET: "devices",
    EffectKind.DEVICE_FORGET_USER: "devices",
    # After the forget's own events on the same lane: they too become unlinkable.
    EffectKind.LEDGER_SHRED: "ledger",
}


def _plain(value: object) -> object:
    """JSON form of a Ledger event in a payload (a time attribute as {"time_us": ...})."""
    if isinstance(value, NewEvent):
        return {
            "idempotency_key": value.idempotency_key,
            "event_type": value.event_type,
            "reason_code": value.reason_code,
            "attributes": [
                [name, _plain(v) if isinstance(v, EventTime) else v] for name, v in value.attributes
            ],
            "occur_time_us": value.occur_time_us,
        }
    if isinstance(value, EventTime):
        return {"time_us": value.micros}
    if isinstance(value, Linkable):  # hashed by the Ledger writer, never stored as such
        return {"linkable": value.text}
    if isinstance(value, Sealed):
        return {"sealed": value.text}
    raise TypeError(f"not a payload value: {type(value).__name__}")


def _attribute(item: list[object]) -> tuple[str, AttributeValue]:
    # [name, value]; effects queued before the shared Ledger writer hold [name, "s"|"i"|"b", value].
    name, value = str(item[0]), item[-1]
    if len(item) == 3:
        value = {"i": int, "b": bool}.get(str(item[1]), str)(value)
    if isinstance(value, dict) and "linkable" in value:
        return name, Linkable(str(value["linkable"]))
    if isinstance(value, dict) and "sealed" in value:
        return name, Sealed(str(value["sealed"]))
    if isinstance(value, dict):
        return name, EventTime(int(value["time_us"]))
    if isinstance(value, bool | int | str):
        return name, value
    raise EffectRejected(f"attribute {name} holds {type(value).__name__}")


def ledger_events(events: list[dict[str, object]]) -> list[NewEvent]:
    """The events of a queued LEDGER_APPEND."""
    return [
        NewEvent(
            str(event["idempotency_key"]),
            str(event["event_type"]),
            str(event["reason_code"]),
            tuple(_attribute(a) for a in event["attributes"]),  # type: ignore[attr-defined]
            int(event["occur_time_us"]),  # type: ignore[call-overload]
        )
        for event in events
    ]


def queued_form(marker: str, effects: Sequence[Effect]) -> list[QueuedForm]:
    """The outbox form of a request's effects: keyed by the request's marker (written once)
    and their position, so the same request never queues them twice."""
    return [
        QueuedForm(
            kind=effect.kind.value,
            payload=json.dumps(
                effect.payload, sort_keys=True, separators=(",", ":"), default=_plain
            ).encode(),
            key=f"{marker}#{position}",
            lane=LANES[effect.kind],
        )
        for position, effect in enumerate(effects)
    ]


def effect_of(queued: QueuedEffect) -> Effect:
    """The domain effect a queued one holds."""
    try:
        return Effect(EffectKind(queued.kind), json.loads(queued.payload))
    except ValueError as error:  # an unknown kind or a payload that is not JSON
        raise EffectRejected(f"undecodable effect {queued.kind}") from error


class EffectHandlers:
    """Runs one queued effect through the outbound ports."""

    def __init__(self, atoms: AtomReader, dependencies: Dependencies) -> None:
        self._atoms = atoms
        self._deps = dependencies

    def by_kind(self) -> dict[str, Handler]:
        return {kind.value: self.run for kind in EffectKind}

    async def run(self, queued: QueuedEffect, timeout_s: float) -> None:
        tenant_id, user_id = queued.tenant_id, queued.user_id
        effect = effect_of(queued)
        payload = effect.payload
        match effect.kind:
            case EffectKind.LEDGER_APPEND:
                events = ledger_events(payload["events"])  # type: ignore[arg-type]
                try:
                    await self._deps.ledger.append(tenant_id, user_id, events)
                except (
                    Conflict
                ) as error:  # a key the Ledger holds with other content: never accepted
                    raise EffectRejected(str(error)) from error
            case EffectKind.INDEX_REMOVE:
                await self._deps.index.remove(tenant_id, user_id, payload["atom_ids"])  # type: ignore[arg-type]
            case EffectKind.INDEX_UPSERT:
                ids = list(payload["atom_ids"])  # type: ignore[call-overload]
                # The current state is sent, so a forget queued later never resurrects content.
                atoms = [
                    a
                    for a in await self._atoms.atoms_by_id(tenant_id, user_id, ids)
                    if a.status is not AtomStatus.SUPERSEDED
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
            case EffectKind.GUARD_FORGET_USER:
                await self._deps.guard.forget_user(
                    tenant_id,
                    user_id,
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.STATE_APPLY:
                await self._deps.state.apply_command(
                    tenant_id,
                    user_id,
                    str(payload["command"]),
                    str(payload["idempotency_key"]),
                    int(payload["now_us"]),  # type: ignore[call-overload]
                    resume_only=bool(payload.get("resume_only", False)),
                )
            case EffectKind.THREAD_FORGET:
                await self._deps.threads.forget_thread(
                    tenant_id,
                    user_id,
                    str(payload["thread_id"]),
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.THREAD_REDACT:
                await self._deps.threads.redact_turns(
                    tenant_id,
                    user_id,
                    list(payload["turn_ids"]),  # type: ignore[call-overload]
                    list(payload["terms"]),  # type: ignore[call-overload]
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.THREAD_FORGET_USER:
                await self._deps.threads.forget_user(
                    tenant_id,
                    user_id,
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.THREAD_FORGET_TONE:
                await self._deps.threads.forget_tone(
                    tenant_id,
                    user_id,
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.THREAD_RETENTION:
                await self._deps.threads.set_retention_mode(
                    tenant_id,
                    user_id,
                    bool(payload["remember_everything"]),
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.INDEX_FORGET_USER:
                await self._deps.index.forget_user(tenant_id, user_id)
            case EffectKind.DEVICE_FORGET if self._deps.devices is not None:
                await self._deps.devices.forget_items(
                    tenant_id,
                    user_id,
                    str(payload["item_kind"]),
                    list(payload["keys"]),  # type: ignore[call-overload]
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.DEVICE_FORGET_USER if self._deps.devices is not None:
                await self._deps.devices.forget_user(
                    tenant_id,
                    user_id,
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.LEDGER_SHRED:
                await self._deps.keys.shred(
                    tenant_id,
                    user_id,
                    int(payload["now_us"]),  # type: ignore[call-overload]
                )
            case EffectKind.DEVICE_FORGET | EffectKind.DEVICE_FORGET_USER:
                # Queued while the mesh had OutboxSync, now without it: kept for an operator.
                raise EffectRejected("no OutboxSync in this mesh")
            case EffectKind.THREAD_RESTRICT:
                await self._deps.threads.restrict_turns(
                    tenant_id,
                    user_id,
                    list(payload["turn_ids"]),  # type: ignore[call-overload]
                    str(payload["exposure"]),
                )


def effect_outbox(
    database: Database,
    atoms: AtomReader,
    dependencies: Dependencies,
    policy: RetryPolicy | None = None,
) -> SharedOutbox:
    """The outbox over the extractor's database, delivering through the outbound ports."""
    return SharedOutbox(database, EffectHandlers(atoms, dependencies).by_kind(), policy)
