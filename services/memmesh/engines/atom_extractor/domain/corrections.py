"""Correction pairs (heard -> meant): exactly one atom update per pair (seed 001 Q13)."""

from __future__ import annotations

import re
from dataclasses import replace

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    AtomStatus,
    ChangeKind,
    Provenance,
)
from memmesh.engines.atom_extractor.domain.exposure_policy import default_exposure, topics_of
from memmesh.engines.atom_extractor.domain.freshness import last_touch_us
from memmesh.engines.atom_extractor.domain.updates import resolve_conflict
from memmesh.engines.atom_extractor.domain.working_set import (
    ChangeContext,
    WorkingCapsule,
    change,
    with_evidence,
)


def _word_pattern(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(value.strip())}(?![\w])", re.I)


def _holds(atom: AtomRecord, value: str) -> bool:
    lowered = value.strip().lower()
    return any(t.lower() == lowered for t in atom.critical_tokens) or bool(
        _word_pattern(value).search(atom.text)
    )


def _key_with(key: str, heard: str, meant: str) -> str:
    heard_slug, meant_slug = _slug(heard), _slug(meant)
    segments = [meant_slug if segment == heard_slug else segment for segment in key.split(".")]
    return ".".join(segments)


def _slug(value: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", value.lower()))


def corrected(atom: AtomRecord, heard: str, meant: str) -> AtomRecord:
    """The atom with the misheard value replaced by the meant one in text, tokens, key and topics."""
    text = _word_pattern(heard).sub(meant.strip(), atom.text)
    tokens = tuple(
        meant.strip() if t.lower() == heard.strip().lower() else t for t in atom.critical_tokens
    )
    key = _key_with(atom.key, heard, meant)
    return replace(
        atom,
        text=text,
        key=key,
        critical_tokens=tokens,
        topics=topics_of(key, text, tokens),
        # A correction may make a fact more sensitive, never less.
        exposure=max(atom.exposure, default_exposure(atom.category, key, text)),
    )


def _target(ws: WorkingCapsule, heard: str, meant: str) -> AtomRecord | None:
    live = [a for a in ws.atoms() if a.status is not AtomStatus.SUPERSEDED and _holds(a, heard)]

    def order(atom: AtomRecord) -> tuple[int, int, str]:
        partner = ws.get(atom.conflict_atom_id) if atom.conflict_atom_id else None
        resolves = partner is not None and _holds(partner, meant)
        return (0 if resolves else 1, -last_touch_us(atom), atom.atom_id)

    return min(live, key=order) if live else None


def apply_correction(ws: WorkingCapsule, heard: str, meant: str, ctx: ChangeContext) -> None:
    """Update the one atom that holds the misheard value; a conflict it is part of is resolved."""
    if not heard.strip() or not meant.strip() or heard.strip().lower() == meant.strip().lower():
        return
    atom = _target(ws, heard, meant)
    if atom is None:
        return
    partner = ws.get(atom.conflict_atom_id) if atom.conflict_atom_id else None
    if partner is not None and _holds(partner, meant):
        # The meant value is already held by the conflict partner: it wins, the misheard one goes.
        resolve_conflict(
            ws,
            partner,
            atom,
            ctx,
            reasons.USER_CORRECTION,
            reasons.CORRECTION_DELTA_BP,
            ChangeKind.CORRECTED,
        )
        return
    fixed = replace(
        corrected(atom, heard, meant),
        status=AtomStatus.ACTIVE,
        conflict_atom_id="",
        provenance=Provenance.VERIFIED,
        confidence_bp=reasons.bounded(
            atom.confidence_bp + reasons.CORRECTION_DELTA_BP, verified=True
        ),
        confirm_time_us=ctx.now_us,
        evidence_turn_ids=with_evidence(atom.evidence_turn_ids, ctx.evidence_turn_id),
    )
    ws.update_count += 1
    ws.put(
        fixed,
        change(
            ChangeKind.CORRECTED,
            fixed,
            reasons.USER_CORRECTION,
            fixed.confidence_bp - atom.confidence_bp,
        ),
    )
    if partner is not None:
        ws.update_count += 1
        retired = replace(partner, status=AtomStatus.SUPERSEDED, conflict_atom_id="")
        ws.put(retired, change(ChangeKind.SUPERSEDED, retired, reasons.CONFLICT_RESOLVED))
