"""Ledger events and queued effects of a request's changes: codes, deltas and keyed hashes,
never text. Atom keys, atom ids (a hash of key and value, so guessable from a name),
command targets and correction pairs go in as `Linkable`: the Ledger writer stores them as
HMACs under the user's subject key, and a shredded key leaves nothing to link them by."""

from __future__ import annotations

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomChange,
    AtomRecord,
    AtomStatus,
    ChangeKind,
    Effect,
    EffectKind,
    digest,
)
from memmesh.engines.atom_extractor.domain.control import CommandPlan
from memmesh.engines.atom_extractor.domain.working_set import ChangeContext, WorkingCapsule
from memmesh.extraction.model import Command
from memmesh.ledger_event import AttributeValue, Linkable, NewEvent
from memmesh.policy.sensitivity import Exposure

EVENT_TYPES = {
    ChangeKind.CREATED: "ATOM_CREATED",
    ChangeKind.CONFIRMED: "ATOM_CONFIRMED",
    ChangeKind.SUPERSEDED: "ATOM_SUPERSEDED",
    ChangeKind.CONFLICT: "ATOM_CONFLICT",
    ChangeKind.CORRECTED: "ATOM_CORRECTED",
    ChangeKind.FORGOTTEN: "ATOM_FORGOTTEN",
    ChangeKind.MARKED: "ATOM_MARKED",
    ChangeKind.DROPPED: "ATOM_DROPPED",
}
COMMAND_APPLIED = "COMMAND_APPLIED"
CORRECTION_CAPTURED = "CORRECTION_CAPTURED"
# ThreadStore.RestrictTurns takes at most 128 turn ids per request.
RESTRICT_BATCH = 128

Attribute = tuple[str, AttributeValue]


def idempotency_key(marker: str, *parts: str) -> str:
    """A retried request derives the same keys, so the ledger writes nothing twice."""
    return "ax-" + digest(marker, *parts)[:48]


def _event(
    key: str, event_type: str, reason: str, attributes: list[Attribute], ctx: ChangeContext
) -> NewEvent:
    return NewEvent(
        key, event_type, reason, tuple(sorted(attributes, key=lambda a: a[0])), ctx.now_us
    )


def change_event(position: int, item: AtomChange, ctx: ChangeContext) -> NewEvent:
    """The ledger event of one change (position keeps two changes of one atom apart)."""
    atom = item.atom
    attributes: list[Attribute] = [
        ("atom_id", Linkable(atom.atom_id)),
        ("key", Linkable(atom.key)),
        ("confidence_delta_bp", item.confidence_delta_bp),
        ("change", item.kind.value),
    ]
    if item.kind is not ChangeKind.FORGOTTEN and item.kind is not ChangeKind.DROPPED:
        attributes += [("version", atom.version), ("confidence_bp", atom.confidence_bp)]
    if atom.conflict_atom_id:
        attributes.append(("conflict_atom_id", Linkable(atom.conflict_atom_id)))
    key = idempotency_key(ctx.marker, str(position), atom.atom_id, item.kind.value)
    return _event(key, EVENT_TYPES[item.kind], item.reason_code, attributes, ctx)


def command_event(plan: CommandPlan, target: str, ctx: ChangeContext) -> NewEvent:
    """COMMAND_APPLIED: the command, a keyed hash of its target and how much it touched."""
    attributes: list[Attribute] = [
        ("command", plan.command.value),
        ("affected_count", len(plan.affected_atom_ids)),
        ("rule_count", len(plan.rules)),
    ]
    if target:
        attributes.append(("target", Linkable(target.strip().lower())))
    key = idempotency_key(ctx.marker, "command", plan.command.value)
    return _event(key, COMMAND_APPLIED, reasons.USER_COMMAND, attributes, ctx)


def correction_event(heard: str, meant: str, ctx: ChangeContext) -> NewEvent:
    """CORRECTION_CAPTURED: the pair is named by a keyed hash; its words stay in the capsule."""
    pair = "\x1f".join((heard.strip().lower(), meant.strip().lower()))
    key = idempotency_key(ctx.marker, "correction", digest(pair))
    return _event(
        key, CORRECTION_CAPTURED, reasons.CORRECTION_CAPTURED, [("pair", Linkable(pair))], ctx
    )


def restrict_effects(written: list[AtomRecord]) -> list[Effect]:
    """The evidence turns of every written atom that may not be spoken get at least its
    exposure in the archive, so no transcript-derived part tells what the atom hides."""
    turns: dict[Exposure, set[str]] = {}
    for atom in written:
        if atom.exposure is not Exposure.SAFE_TO_SPEAK and atom.evidence_turn_ids:
            turns.setdefault(atom.exposure, set()).update(atom.evidence_turn_ids)
    effects = []
    for exposure in sorted(turns, key=lambda e: e.name):
        ids = sorted(turns[exposure])
        effects += [
            Effect(
                EffectKind.THREAD_RESTRICT,
                {"turn_ids": ids[start : start + RESTRICT_BATCH], "exposure": exposure.name},
            )
            for start in range(0, len(ids), RESTRICT_BATCH)
        ]
    return effects


def effects_of(
    ws: WorkingCapsule,
    ctx: ChangeContext,
    extra_events: list[NewEvent],
    plan: CommandPlan | None,
) -> list[Effect]:
    """Ledger appends, index upserts and removals, rules, state and thread work of one request."""
    events = [change_event(i, c, ctx) for i, c in enumerate(ws.changes)] + extra_events
    # One append per request: the Ledger writer sends it in as many calls as the Ledger needs.
    effects = [Effect(EffectKind.LEDGER_APPEND, {"events": events})] if events else []
    written = [atom for atom, _ in ws.upserts()]
    live = sorted(a.atom_id for a in written if a.status is not AtomStatus.SUPERSEDED)
    gone = sorted(
        {a.atom_id for a in written if a.status is AtomStatus.SUPERSEDED} | set(ws.deletes())
    )
    if gone:
        effects.append(Effect(EffectKind.INDEX_REMOVE, {"atom_ids": gone}))
    if live:
        effects.append(Effect(EffectKind.INDEX_UPSERT, {"atom_ids": live}))
    effects += restrict_effects(written)
    if plan is not None:
        effects += [
            Effect(
                EffectKind.GUARD_RULE,
                {
                    "kind": r.kind,
                    "target_type": r.target_type,
                    "target": r.target,
                    "now_us": ctx.now_us,
                },
            )
            for r in plan.rules
        ]
        if plan.state_change is not None:
            effects.append(
                Effect(
                    EffectKind.STATE_APPLY,
                    {
                        "command": plan.state_change.value,
                        "resume_only": plan.resume_only,
                        "idempotency_key": idempotency_key(
                            ctx.marker, "state", plan.state_change.value
                        ),
                        "now_us": ctx.now_us,
                    },
                )
            )
            if plan.state_change is Command.REMEMBER_EVERYTHING:
                effects.append(
                    Effect(
                        EffectKind.THREAD_RETENTION,
                        {"remember_everything": True, "now_us": ctx.now_us},
                    )
                )
        if plan.forget_tone:
            effects.append(Effect(EffectKind.THREAD_FORGET_TONE, {"now_us": ctx.now_us}))
        if plan.forget_thread_id:
            effects.append(
                Effect(
                    EffectKind.THREAD_FORGET,
                    {"thread_id": plan.forget_thread_id, "now_us": ctx.now_us},
                )
            )
    return effects
