"""Applying extracted facts to the capsule: create, confirm, supersede or hold in conflict."""

from __future__ import annotations

from dataclasses import replace

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    AtomStatus,
    ChangeKind,
    Provenance,
    ProvenanceEntry,
    atom_id_of,
)
from memmesh.engines.atom_extractor.domain.exposure_policy import default_exposure, topics_of
from memmesh.engines.atom_extractor.domain.working_set import (
    ChangeContext,
    WorkingCapsule,
    change,
    with_evidence,
)
from memmesh.extraction.model import ExtractedFact


def new_atom(fact: ExtractedFact, ctx: ChangeContext, provenance: Provenance) -> AtomRecord:
    """The atom a fact would create (version 0: put() raises it to 1)."""
    return AtomRecord(
        atom_id=atom_id_of(ctx.tenant_id, ctx.user_id, fact.key, fact.text),
        key=fact.key,
        text=fact.text,
        category=fact.category,
        type=fact.type,
        provenance=provenance,
        confidence_bp=reasons.bounded(fact.confidence_bp, verified=False),
        exposure=default_exposure(fact.category, fact.key, fact.text),
        pinned=False,
        pull_only=False,
        critical_tokens=tuple(fact.critical_tokens),
        create_time_us=ctx.now_us,
        confirm_time_us=0,
        last_use_time_us=0,
        use_count=0,
        version=0,
        evidence_turn_ids=with_evidence((), ctx.evidence_turn_id),
        status=AtomStatus.ACTIVE,
        conflict_atom_id="",
        topics=topics_of(fact.key, fact.text, tuple(fact.critical_tokens)),
    )


def _critical_change(old: AtomRecord, fact: ExtractedFact) -> bool:
    old_tokens = {t.lower() for t in old.critical_tokens}
    new_tokens = {t.lower() for t in fact.critical_tokens}
    return old_tokens != new_tokens


def apply_fact(
    ws: WorkingCapsule, fact: ExtractedFact, ctx: ChangeContext, provenance: Provenance
) -> None:
    """Apply one gated fact; over the per-turn caps it is dropped with a logged reason."""
    candidate = new_atom(fact, ctx, provenance)
    current = ws.current(fact.key)
    same = next((a for a in current if a.atom_id == candidate.atom_id), None)
    if same is not None:
        _confirm_restated(ws, same, ctx)
    elif not current:
        _create(
            ws,
            candidate,
            ctx,
            reasons.USER_STATED
            if provenance is Provenance.USER_STATED
            else reasons.SEMANTIC_PROPOSAL,
        )
    else:
        old = current[0]
        protected = old.pinned or old.provenance is Provenance.VERIFIED
        if _critical_change(old, fact) or protected or old.status is AtomStatus.CONFLICT:
            reason = (
                reasons.CRITICAL_TOKEN_CHANGED if not protected else reasons.VERIFIED_VALUE_CHANGED
            )
            _hold_in_conflict(ws, old, candidate, ctx, reason)
        else:
            _supersede(ws, current, candidate, ctx)


def _drop(ws: WorkingCapsule, atom: AtomRecord) -> None:
    ws.record(change(ChangeKind.DROPPED, atom, reasons.CHANGE_CAP_EXCEEDED))


def _create(ws: WorkingCapsule, candidate: AtomRecord, ctx: ChangeContext, reason: str) -> None:
    if not ws.within_caps(1, 0):
        _drop(ws, candidate)
        return
    ws.new_count += 1
    atom = candidate
    ws.put(atom, change(ChangeKind.CREATED, atom, reason, atom.confidence_bp))


def _confirm_restated(ws: WorkingCapsule, atom: AtomRecord, ctx: ChangeContext) -> None:
    partner = ws.get(atom.conflict_atom_id) if atom.status is AtomStatus.CONFLICT else None
    if not ws.within_caps(0, 2 if partner else 1):
        _drop(ws, atom)
        return
    if partner is None:
        ws.update_count += 1
        confirmed = _confirmed(
            atom, ctx, reasons.CONFIRM_DELTA_BP, verified=atom.provenance is Provenance.VERIFIED
        )
        ws.put(
            confirmed,
            change(
                ChangeKind.CONFIRMED,
                confirmed,
                reasons.REPEATED_STATEMENT,
                confirmed.confidence_bp - atom.confidence_bp,
            ),
        )
        return
    # Restating one side of a conflict is the user's explicit confirmation of it.
    resolve_conflict(
        ws,
        atom,
        partner,
        ctx,
        reasons.USER_CONFIRMED,
        reasons.USER_CONFIRM_DELTA_BP,
        ChangeKind.CONFIRMED,
    )


def resolve_conflict(
    ws: WorkingCapsule,
    winner: AtomRecord,
    loser: AtomRecord | None,
    ctx: ChangeContext,
    reason: str,
    delta_bp: int,
    kind: ChangeKind,
) -> AtomRecord:
    """The winner becomes verified and active; its conflict partner, if any, is superseded."""
    ws.update_count += 2 if loser is not None else 1
    confirmed = replace(
        _confirmed(winner, ctx, delta_bp, verified=True),
        status=AtomStatus.ACTIVE,
        conflict_atom_id="",
        provenance=Provenance.VERIFIED,
    )
    stored = ws.put(
        confirmed, change(kind, confirmed, reason, confirmed.confidence_bp - winner.confidence_bp)
    )
    if loser is not None:
        retired = replace(loser, status=AtomStatus.SUPERSEDED, conflict_atom_id="")
        ws.put(retired, change(ChangeKind.SUPERSEDED, retired, reasons.CONFLICT_RESOLVED))
    return stored


def _confirmed(atom: AtomRecord, ctx: ChangeContext, delta_bp: int, verified: bool) -> AtomRecord:
    return replace(
        atom,
        confidence_bp=reasons.bounded(atom.confidence_bp + delta_bp, verified=verified),
        confirm_time_us=ctx.now_us,
        evidence_turn_ids=with_evidence(atom.evidence_turn_ids, ctx.evidence_turn_id),
    )


def _hold_in_conflict(
    ws: WorkingCapsule, old: AtomRecord, candidate: AtomRecord, ctx: ChangeContext, reason: str
) -> None:
    # seed 001 §2.11.10: never overwrite silently; both stay, marked, until the user confirms one.
    if not ws.within_caps(1, 1):
        _drop(ws, candidate)
        return
    ws.new_count += 1
    ws.update_count += 1
    delta = reasons.CONFLICT_DELTA_BP
    held = replace(
        candidate,
        status=AtomStatus.CONFLICT,
        conflict_atom_id=old.atom_id,
        confidence_bp=reasons.bounded(candidate.confidence_bp + delta, verified=False),
    )
    ws.put(
        held,
        change(ChangeKind.CONFLICT, held, reason, held.confidence_bp - candidate.confidence_bp),
    )
    marked = replace(
        old,
        status=AtomStatus.CONFLICT,
        conflict_atom_id=held.atom_id,
        confidence_bp=reasons.bounded(
            old.confidence_bp + delta, verified=old.provenance is Provenance.VERIFIED
        ),
    )
    ws.put(
        marked,
        change(ChangeKind.CONFLICT, marked, reason, marked.confidence_bp - old.confidence_bp),
    )


def _supersede(
    ws: WorkingCapsule, current: list[AtomRecord], candidate: AtomRecord, ctx: ChangeContext
) -> None:
    if not ws.within_caps(1, len(current)):
        _drop(ws, candidate)
        return
    ws.new_count += 1
    ws.update_count += len(current)
    for old in current:
        retired = replace(old, status=AtomStatus.SUPERSEDED, conflict_atom_id="")
        ws.put(retired, change(ChangeKind.SUPERSEDED, retired, reasons.VALUE_CHANGED))
    atom = candidate
    ws.put(atom, change(ChangeKind.CREATED, atom, reasons.VALUE_CHANGED, atom.confidence_bp))


def confirm_atom(ws: WorkingCapsule, atom_id: str, ctx: ChangeContext) -> None:
    """The user confirmed an atom: verified, raised by a fixed delta; a conflict partner is superseded."""
    atom = ws.get(atom_id)
    if atom is None or atom.status is AtomStatus.SUPERSEDED:
        return
    partner = ws.get(atom.conflict_atom_id) if atom.conflict_atom_id else None
    resolve_conflict(
        ws,
        atom,
        partner,
        ctx,
        reasons.USER_CONFIRMED,
        reasons.USER_CONFIRM_DELTA_BP,
        ChangeKind.CONFIRMED,
    )


def provenance_of(entry: ProvenanceEntry | None) -> Provenance:
    """Facts a model proposed are tool-derived; the rules' facts are the user's own statements."""
    return (
        Provenance.TOOL_DERIVED
        if entry is not None and not entry.fallback_used
        else Provenance.USER_STATED
    )
