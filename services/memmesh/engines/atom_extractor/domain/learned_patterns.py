"""USER_PATTERN atoms learned from repeated behaviour (seed 002): one atom per signature,
created when its pattern is applied, updated when it is re-observed or decays, removed
when it falls below the apply threshold or its evidence is forgotten. A proposal (0.75-0.79)
goes to the rejection log, never into the capsule."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    AtomStatus,
    ChangeKind,
    Provenance,
    RejectionEntry,
    atom_id_of,
)
from memmesh.engines.atom_extractor.domain.erasure import Erasure, observation_erasure
from memmesh.engines.atom_extractor.domain.exposure_policy import default_exposure, topics_of
from memmesh.engines.atom_extractor.domain.working_set import (
    ChangeContext,
    WorkingCapsule,
    change,
)
from memmesh.extraction.gates import USER_PATTERN_APPLY_BP
from memmesh.extraction.model import FactType, RejectionReason
from memmesh.extraction.patterns import (
    PATTERN_KEY_PREFIX,
    SUPPORT_HORIZON_US,
    Observation,
    ObservationWrite,
    Pattern,
    infer,
    pattern_key,
)
from memmesh.policy.sensitivity import stricter

PATTERN_LEARNED = "PATTERN_LEARNED"
PATTERN_REOBSERVED = "PATTERN_REOBSERVED"
PATTERN_DECAYED = "PATTERN_DECAYED"
PATTERN_EVIDENCE_FORGOTTEN = "PATTERN_EVIDENCE_FORGOTTEN"
PATTERN_EXPIRED = "PATTERN_EXPIRED"


@dataclass(frozen=True)
class Learning:
    """What a request gives the learner: the user's stored observations, the turn's own,
    and the signatures whose pattern a do-not-store rule refuses."""

    history: tuple[Observation, ...]
    observed: tuple[Observation, ...] = ()
    refused: frozenset[str] = frozenset()

    def keys(self) -> tuple[str, ...]:
        """Keys of every pattern atom the request may change (its working set reads them)."""
        return tuple(sorted({pattern_key(o.signature) for o in (*self.history, *self.observed)}))


@dataclass(frozen=True)
class Learned:
    """What the commit carries of the learner's work beyond the atoms in the working set."""

    write: ObservationWrite
    proposals: tuple[RejectionEntry, ...]


def candidate_atoms(learning: Learning, ctx: ChangeContext) -> list[tuple[str, AtomRecord]]:
    """(signature, atom) of each pattern the turn's observations would apply: what a
    do-not-store rule is asked about before anything is stored."""
    observed = {o.signature for o in learning.observed}
    everything = (*learning.history, *learning.observed)
    at = max([ctx.now_us, *(o.observe_time_us for o in everything)])  # as `learn` judges
    patterns = infer((o for o in everything if o.signature in observed), at)
    return [
        (p.signature, _record(p, ctx, None))
        for p in patterns
        if p.applied and p.signature in observed
    ]


def pattern_atom_id(tenant_id: str, user_id: str, key: str) -> str:
    """One atom per signature: its id depends on the key alone, never on the wording."""
    return atom_id_of(tenant_id, user_id, key, key)


def learn(
    ws: WorkingCapsule, ctx: ChangeContext, learning: Learning, erasure: Erasure | None
) -> Learned:
    """Bring the pattern atoms in line with the observations that remain after the request's
    forget (if any) and its own observations, at the request's `now`."""
    known = {o.signature for o in (*learning.history, *learning.observed)}
    forgotten = [
        signature
        for signature in sorted(known)
        if any(
            c.kind is ChangeKind.FORGOTTEN and c.atom.key == pattern_key(signature)
            for c in ws.changes
        )
    ]
    taken = observation_erasure(erasure, forgotten)
    remaining = [
        o for o in (*learning.history, *learning.observed) if taken is None or not taken.covers(o)
    ]
    # A turn extracted late (its `now` before observations already stored) never rolls the
    # patterns back in time: they are judged at the latest moment known.
    at = max([ctx.now_us, *(o.observe_time_us for o in remaining)])
    observed_now = {o.signature for o in learning.observed}
    keys = {signature: pattern_key(signature) for signature in known}
    # Only a signature seen now or holding an atom can change state: the rest are not scored.
    held = {
        s for s, key in keys.items() if ws.get(pattern_atom_id(ctx.tenant_id, ctx.user_id, key))
    }
    judged = observed_now | held
    patterns = {p.signature: p for p in infer((o for o in remaining if o.signature in judged), at)}
    proposals: list[RejectionEntry] = []
    for signature in sorted(judged):
        pattern = None if signature in learning.refused else patterns.get(signature)
        was_applied = _reconcile(ws, ctx, signature, pattern, taken is not None)
        if (
            pattern is not None
            and not pattern.applied
            and (signature in observed_now or was_applied)
        ):
            proposals += _proposal(pattern, ctx)
    for atom in ws.atoms():
        # A pattern whose every observation is gone (evicted) has nothing to stand on.
        if (
            atom.key.startswith(PATTERN_KEY_PREFIX)
            and atom.key not in keys.values()
            and not atom.pinned
        ):
            _remove(ws, atom, PATTERN_EXPIRED)
    added = tuple(
        o
        for o in learning.observed
        if o.signature not in learning.refused and (taken is None or not taken.covers(o))
    )
    return Learned(
        ObservationWrite(added, taken, keep_after_us=at - SUPPORT_HORIZON_US),
        tuple(proposals),
    )


def _reconcile(
    ws: WorkingCapsule,
    ctx: ChangeContext,
    signature: str,
    pattern: Pattern | None,
    erasing: bool,
) -> bool:
    """Create, update or remove one signature's atom; True when it was applied before."""
    key = pattern_key(signature)
    atom = ws.get(pattern_atom_id(ctx.tenant_id, ctx.user_id, key))
    if atom is not None and atom.status is AtomStatus.SUPERSEDED:
        atom = None
    if pattern is None or not pattern.applied:
        # A pinned pattern stays through decay, but not through a forget of its evidence.
        if atom is not None and (erasing or not atom.pinned):
            _remove(ws, atom, PATTERN_EVIDENCE_FORGOTTEN if erasing else PATTERN_EXPIRED)
        return atom is not None
    fresh = _record(pattern, ctx, atom)
    if atom is None:
        if ws.within_caps(1, 0):
            ws.new_count += 1
            ws.put(fresh, change(ChangeKind.CREATED, fresh, PATTERN_LEARNED, fresh.confidence_bp))
        else:
            ws.record(change(ChangeKind.DROPPED, fresh, reasons.CHANGE_CAP_EXCEEDED))
        return False
    if _same(atom, fresh) or not ws.within_caps(0, 1):
        return True  # unchanged, or over the turn's cap: a later request brings it in line
    ws.update_count += 1
    delta = fresh.confidence_bp - atom.confidence_bp
    if pattern.last_seen_us > atom.confirm_time_us:
        ws.put(fresh, change(ChangeKind.CONFIRMED, fresh, PATTERN_REOBSERVED, delta))
    else:
        reason = PATTERN_EVIDENCE_FORGOTTEN if erasing else PATTERN_DECAYED
        ws.put(fresh, change(ChangeKind.MARKED, fresh, reason, delta))
    return True


def _record(pattern: Pattern, ctx: ChangeContext, atom: AtomRecord | None) -> AtomRecord:
    """The atom of an applied pattern; an existing atom keeps its flags and history."""
    exposure = default_exposure("preference", pattern.key, pattern.text)
    base = atom or AtomRecord(
        atom_id=pattern_atom_id(ctx.tenant_id, ctx.user_id, pattern.key),
        key=pattern.key,
        text=pattern.text,
        category="preference",
        type=FactType.USER_PATTERN,
        provenance=Provenance.INFERRED,
        confidence_bp=pattern.confidence_bp,
        exposure=exposure,
        pinned=False,
        pull_only=False,
        critical_tokens=(),
        create_time_us=ctx.now_us,
        confirm_time_us=0,
        last_use_time_us=0,
        use_count=0,
        version=0,
        evidence_turn_ids=(),
        status=AtomStatus.ACTIVE,
        conflict_atom_id="",
        topics=(),
    )
    return replace(
        base,
        text=pattern.text,
        confidence_bp=reasons.bounded(pattern.confidence_bp, verified=False),
        exposure=stricter(base.exposure, exposure),
        # The last observation is the pattern's confirmation: freshness counts from it.
        confirm_time_us=pattern.last_seen_us,
        evidence_turn_ids=pattern.evidence_turn_ids,
        topics=topics_of(pattern.key, pattern.text, ()),
    )


def _same(atom: AtomRecord, fresh: AtomRecord) -> bool:
    return (atom.text, atom.confidence_bp, atom.evidence_turn_ids, atom.confirm_time_us) == (
        fresh.text,
        fresh.confidence_bp,
        fresh.evidence_turn_ids,
        fresh.confirm_time_us,
    )


def _remove(ws: WorkingCapsule, atom: AtomRecord, reason: str) -> None:
    if ws.delete(atom.atom_id) is None:
        return
    gone = replace(atom, text="", critical_tokens=(), topics=(), evidence_turn_ids=())
    ws.record(change(ChangeKind.FORGOTTEN, gone, reason, -atom.confidence_bp))


def _proposal(pattern: Pattern, ctx: ChangeContext) -> Iterable[RejectionEntry]:
    """seed 002: a 0.75-0.79 pattern is logged as a proposal and never auto-applied."""
    if not ctx.evidence_turn_id:
        return ()
    details = [
        ("key", pattern.key),
        ("support_turns", str(pattern.support_turns)),
        ("support_sessions", str(pattern.support_sessions)),
        *((name, str(bp)) for name, bp in pattern.factors),
    ]
    return (
        RejectionEntry(
            candidate_text=pattern.text,
            type=FactType.USER_PATTERN,
            confidence_bp=pattern.confidence_bp,
            reason_code=RejectionReason.PATTERN_PROPOSAL.value,
            threshold_bp=USER_PATTERN_APPLY_BP,
            details=";".join(f"{k}={v}" for k, v in details),
            turn_id=ctx.evidence_turn_id,
            reject_time_us=ctx.now_us,
        ),
    )
