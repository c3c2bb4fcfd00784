"""User control commands on the capsule (seed 001 §2.11.11, §2.22): deterministic effects."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import AtomRecord, AtomStatus, ChangeKind
from memmesh.engines.atom_extractor.domain.erasure import (
    Erasure,
    blocked_hashes,
    content_words,
    forget_terms,
    only_evidenced_by,
    word_hash,
)
from memmesh.engines.atom_extractor.domain.working_set import ChangeContext, WorkingCapsule, change
from memmesh.extraction.commands import RESUME_ONLY_TARGET
from memmesh.extraction.model import Command
from memmesh.policy.sensitivity import Exposure

_FILLER = frozenset(
    "my the a an about that this it its me i our your his her their thing things stuff anything everything "
    "memory memories name names info information fact facts please any all of on to for with and or "
    "what who where when is was be".split()
)
_WORD = re.compile(r"[a-z0-9]+")
_KEY = re.compile(r"[a-z_]+(?:\.[a-z0-9_+#'-]+)+")


@dataclass(frozen=True)
class RuleRequest:
    """An exposure rule to set on the ExposureGuard."""

    kind: str
    target_type: str
    target: str

    def label(self) -> str:
        return f"{self.kind}:{self.target_type}:{self.target}"


@dataclass
class CommandPlan:
    """What a command does beyond the capsule changes recorded in the working set."""

    command: Command
    rules: list[RuleRequest] = field(default_factory=list)
    state_change: Command | None = None
    # RECALL_ONLY_IF_ASKED said of resuming only: it turns auto-resume off, recall stays.
    resume_only: bool = False
    forget_thread_id: str = ""
    forget_tone: bool = False
    skip_facts: bool = False
    affected_atom_ids: list[str] = field(default_factory=list)
    # Where the forget reaches beyond the capsule (none for commands that forget nothing).
    erasure: Erasure | None = None


def target_words(target: str) -> tuple[str, ...]:
    """Content words of a command target ("my sister's name" -> ("sister",)), sorted."""
    words = {
        w.removesuffix("s") if w.endswith("'s") else w
        for w in _WORD.findall(target.lower().replace("'s", ""))
    }
    return tuple(sorted(w for w in words if w not in _FILLER and len(w) > 1))


def _vocabulary(atom: AtomRecord) -> set[str]:
    words = set(atom.topics) | set(_WORD.findall(atom.key.replace("_", " ").replace(".", " ")))
    words |= set(_WORD.findall(atom.text.lower().replace("'s", "")))
    words |= {t.lower() for t in atom.critical_tokens}
    return words


def _has(vocabulary: set[str], word: str) -> bool:
    return (
        word in vocabulary
        or (word.endswith("s") and word[:-1] in vocabulary)
        or f"{word}s" in vocabulary
    )


def matching_atoms(ws: WorkingCapsule, target: str, include_superseded: bool) -> list[AtomRecord]:
    """Atoms a target names: a key (or key prefix), or every content word of the target."""
    atoms = [a for a in ws.atoms() if include_superseded or a.status is not AtomStatus.SUPERSEDED]
    cleaned = target.strip().lower()
    if _KEY.fullmatch(cleaned):
        return [a for a in atoms if a.key == cleaned or a.key.startswith(cleaned + ".")]
    words = target_words(target)
    if not words:
        return []
    return [a for a in atoms if all(_has(_vocabulary(a), w) for w in words)]


def _named_or_referenced(
    ws: WorkingCapsule, target: str, last_refs: tuple[str, ...], include_superseded: bool
) -> list[AtomRecord]:
    if target_words(target) or _KEY.fullmatch(target.strip().lower()):
        return matching_atoms(ws, target, include_superseded)
    atoms = [ws.get(atom_id) for atom_id in last_refs]
    return [a for a in atoms if a is not None]


def _rules(kind: str, target: str, atoms: list[AtomRecord]) -> list[RuleRequest]:
    requested = {
        RuleRequest(kind, "KEY", a.key) for a in atoms if a.status is not AtomStatus.SUPERSEDED
    }
    cleaned = target.strip().lower()
    if _KEY.fullmatch(cleaned):
        requested.add(RuleRequest(kind, "KEY", cleaned))
    else:
        # One rule per content word: a wider suppression is the safe direction for privacy.
        requested |= {RuleRequest(kind, "TOPIC", word) for word in target_words(target)}
    return sorted(requested, key=lambda r: (r.kind, r.target_type, r.target))


def forget(
    ws: WorkingCapsule, atoms: list[AtomRecord], ctx: ChangeContext, reason: str
) -> list[str]:
    """Delete atoms' content; a conflict partner left alone becomes active again."""
    forgotten = []
    for atom in sorted(atoms, key=lambda a: a.atom_id):
        if ws.delete(atom.atom_id) is None:
            continue
        forgotten.append(atom.atom_id)
        ws.record(change(ChangeKind.FORGOTTEN, _ids_only(atom), reason, -atom.confidence_bp))
    for atom in ws.atoms():
        if atom.status is AtomStatus.CONFLICT and atom.conflict_atom_id in forgotten:
            freed = replace(atom, status=AtomStatus.ACTIVE, conflict_atom_id="")
            ws.put(freed, change(ChangeKind.MARKED, freed, reasons.CONFLICT_PARTNER_FORGOTTEN))
    return forgotten


def _ids_only(atom: AtomRecord) -> AtomRecord:
    # A forgotten atom is reported by id and key only: its content is gone.
    return replace(atom, text="", critical_tokens=(), topics=(), evidence_turn_ids=())


def mark_pull_only(ws: WorkingCapsule, atoms: list[AtomRecord], reason: str) -> list[str]:
    """Set the pull-only flag on atoms that do not have it."""
    marked = []
    for atom in atoms:
        if atom.pull_only or atom.status is AtomStatus.SUPERSEDED:
            continue
        flagged = replace(atom, pull_only=True)
        ws.put(flagged, change(ChangeKind.MARKED, flagged, reason))
        marked.append(atom.atom_id)
    return marked


def erasure_of(
    atoms: list[AtomRecord],
    forgotten: list[str],
    target: str,
    ctx: ChangeContext,
    command_turn_id: str,
    whole_turn: bool,
    said_turn_ids: frozenset[str] = frozenset(),
    said_last: str = "",
) -> Erasure:
    """A forget of these atoms reaches every turn of the user that holds the forgotten
    terms (their names, numbers and places, and the subject the user named), whether or
    not a fact was extracted from it (`said_turn_ids`: the turns the extractor saw; the
    ThreadStore cuts only the sentences holding a term), the command's own turn, devices'
    copies, and late extractions of the same words. A forget of what was just said
    ("forget that", `said_last`) takes that turn whole: what it said is what is forgotten,
    whatever the extractor understood of it."""
    words = content_words(target_words(target))
    terms = forget_terms(atoms, words)
    turns = {t for a in atoms for t in a.evidence_turn_ids}
    if terms:
        turns |= said_turn_ids
    if command_turn_id and not whole_turn and terms:
        turns.add(command_turn_id)
    whole = {command_turn_id} if whole_turn and command_turn_id else set()
    if said_last:
        whole.add(said_last)
    return Erasure(
        turn_ids=tuple(sorted(turns)),
        terms=terms,
        whole_turn_ids=tuple(sorted(whole)),
        atom_ids=tuple(forgotten),
        # A DO_NOT_STORE rule already refuses the words in any later extraction; a forget
        # leaves no rule, so its words are marked for turns said before it.
        word_hashes=()
        if whole_turn
        else tuple(sorted({word_hash(ctx.tenant_id, ctx.user_id, w) for w in words})),
    )


def plan_command(
    ws: WorkingCapsule,
    command: Command,
    target: str,
    last_refs: tuple[str, ...],
    ctx: ChangeContext,
    thread_id: str,
    command_turn_id: str = "",
    thread_turn_ids: frozenset[str] = frozenset(),
    said_turn_ids: frozenset[str] = frozenset(),
    last_said: str = "",
) -> CommandPlan:
    """Apply a command to the capsule and say what other engines must do. A command said in
    a turn names it (`command_turn_id`); forgetting a conversation is given the ids of the
    turns the extractor saw in it (`thread_turn_ids`); a forget, the ids of every turn of
    the user the extractor saw (`said_turn_ids`) and the last turn said (no command) in the
    session (`last_said`, what "forget that" points at)."""
    plan = CommandPlan(command=command)
    deictic = not target_words(target) and not _KEY.fullmatch(target.strip().lower())
    match command:
        case Command.FORGET:
            atoms = _named_or_referenced(ws, target, last_refs, include_superseded=True)
            plan.affected_atom_ids = forget(ws, atoms, ctx, reasons.USER_FORGET)
            plan.erasure = erasure_of(
                atoms,
                plan.affected_atom_ids,
                target,
                ctx,
                command_turn_id,
                whole_turn=False,
                said_turn_ids=said_turn_ids,
                said_last=last_said if deictic else "",
            )
        case Command.DO_NOT_STORE:
            atoms = _named_or_referenced(ws, target, last_refs, include_superseded=True)
            plan.rules = _rules("DO_NOT_STORE", target, atoms)
            plan.affected_atom_ids = forget(ws, atoms, ctx, reasons.USER_DO_NOT_STORE)
            plan.skip_facts = True
            # The turn that says "off the record" is itself not kept; a subject named stays
            # refused in every later turn that speaks of it.
            erasure = erasure_of(
                atoms,
                plan.affected_atom_ids,
                target,
                ctx,
                command_turn_id,
                whole_turn=True,
                said_turn_ids=said_turn_ids,
                said_last=last_said if deictic else "",
            )
            named = content_words(target_words(target))
            plan.erasure = replace(
                erasure, blocked_hashes=blocked_hashes(ctx.tenant_id, ctx.user_id, named)
            )
        case Command.FORGET_EVERYTHING:
            atoms = ws.atoms()
            plan.affected_atom_ids = forget(ws, atoms, ctx, reasons.USER_FORGET_EVERYTHING)
            plan.erasure = Erasure(everything=True, atom_ids=tuple(plan.affected_atom_ids))
            # Current State forgets the profile (display name, language, settings) too.
            plan.state_change = command
        case Command.PULL_ONLY:
            atoms = _named_or_referenced(ws, target, last_refs, include_superseded=False)
            plan.rules = _rules("PULL_ONLY", target, atoms)
            plan.affected_atom_ids = mark_pull_only(ws, atoms, reasons.USER_PULL_ONLY)
        case Command.DO_NOT_MENTION:
            atoms = _named_or_referenced(ws, target, last_refs, include_superseded=False)
            plan.rules = _rules("DO_NOT_MENTION", target, atoms)
            plan.affected_atom_ids = [a.atom_id for a in atoms]
        case Command.REMEMBER_EVERYTHING | Command.RECALL_ONLY_IF_ASKED:
            plan.state_change = command
            plan.resume_only = (
                command is Command.RECALL_ONLY_IF_ASKED
                and target.strip().lower() == RESUME_ONLY_TARGET
            )
        case Command.FORGET_THREAD:
            # The conversation goes, and with it the atoms it alone was evidence of.
            turns = thread_turn_ids | ({command_turn_id} if command_turn_id else set())
            atoms = only_evidenced_by(ws.atoms(), frozenset(turns))
            plan.affected_atom_ids = forget(ws, atoms, ctx, reasons.USER_FORGET_THREAD)
            plan.forget_thread_id = thread_id
            plan.erasure = Erasure(session_id=thread_id, atom_ids=tuple(plan.affected_atom_ids))
        case Command.FORGET_TONE:
            # Emotional memory goes on its own: no atom, turn or ledger event changes.
            plan.forget_tone = True
        case _:
            # RECALL_SUMMARY and RESUME_THREAD are answered by the gateway; nothing is stored.
            pass
    return plan


@dataclass(frozen=True)
class MarkFlags:
    """Flags MarkAtoms sets; None leaves a flag as it is."""

    pull_only: bool = False
    pinned: bool = False
    exposure: Exposure | None = None

    def applied_to(self, atom: AtomRecord) -> AtomRecord:
        return replace(
            atom,
            pull_only=atom.pull_only or self.pull_only,
            pinned=atom.pinned or self.pinned,
            exposure=self.exposure or atom.exposure,
        )
