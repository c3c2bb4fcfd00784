"""Use cases of the capsule: process a turn, run commands, correct, confirm, forget, mark, list."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomChange,
    AtomRecord,
    CapsuleCommit,
    ChangeKind,
    CorrectionPair,
    Effect,
    ProvenanceEntry,
    RejectionEntry,
    TurnInput,
    atom_id_of,
    digest,
)
from memmesh.engines.atom_extractor.domain.control import (
    CommandPlan,
    MarkFlags,
    erasure_of,
    forget,
    matching_atoms,
    plan_command,
)
from memmesh.engines.atom_extractor.domain.corrections import apply_correction
from memmesh.engines.atom_extractor.domain.erasure import (
    Erasure,
    blocked_words,
    erasure_effects,
    late_dropped,
    late_kept_observations,
    late_terms,
    local_erasure,
)
from memmesh.engines.atom_extractor.domain.events import command_event, correction_event, effects_of
from memmesh.engines.atom_extractor.domain.learned_patterns import Learning, candidate_atoms, learn
from memmesh.engines.atom_extractor.domain.references import record_use, referenced_ids, turn_words
from memmesh.engines.atom_extractor.domain.updates import (
    apply_fact,
    confirm_atom,
    new_atom,
    provenance_of,
)
from memmesh.engines.atom_extractor.domain.working_set import ChangeContext, WorkingCapsule, change
from memmesh.engines.atom_extractor.outbox import queued_form
from memmesh.engines.atom_extractor.ports import (
    CapsuleStore,
    Dependencies,
    EffectOutbox,
    TurnExtractor,
)
from memmesh.errors import VersionMismatch
from memmesh.extraction.commands import carries_own_content
from memmesh.extraction.model import Command, Correction, ExtractedFact
from memmesh.extraction.patterns import Observation, observe
from memmesh.extraction.rules import extract as extract_by_rules
from memmesh.ledger_event import NewEvent

# A concurrent writer (another engine process) makes a plan stale; re-plan on fresh state.
MAX_PLAN_ATTEMPTS = 3
# How long a request waits for the first attempt of its effects; the drainer retries the rest.
FIRST_ATTEMPT_S = 2.0
# A forget waits longer when its caller allows: its answer tells the caller the words are
# gone from the archive (the next Brief's working memory and summary), and the ThreadStore's
# erasure rebuilds what the words fed, which takes longer on a loaded store.
ERASURE_FIRST_ATTEMPT_S = 6.0


@dataclass
class Applied:
    """What a request's plan adds to the commit beyond atom writes."""

    events: list[NewEvent] = field(default_factory=list)
    plan: CommandPlan | None = None
    corrections: list[CorrectionPair] = field(default_factory=list)
    rejections: list[RejectionEntry] = field(default_factory=list)
    provenance: list[ProvenanceEntry] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    # The processed turn and its session, recorded with the commit.
    turn_session: tuple[str, str] | None = None
    # The processed turn when it said something (no command): what "forget that" points at.
    last_said: tuple[str, str] | None = None
    # What a forget made before this turn was extracted still takes from it (the archive).
    erasure: Erasure | None = None


@dataclass(frozen=True)
class Outcome:
    """Changes a request applied; duplicate when its marker was seen before."""

    changes: tuple[AtomChange, ...] = ()
    plan: CommandPlan | None = None
    duplicate: bool = False
    pending_effects: int = 0


@dataclass(frozen=True)
class ProcessOutcome:
    relevant: bool
    facts: tuple[ExtractedFact, ...]
    command: Command | None
    command_target: str
    correction: Correction | None
    rejections: tuple[RejectionEntry, ...]
    outcome: Outcome
    # The turn is kept nothing of (do-not-store, a forgotten conversation, a forgotten fact
    # said again): the learning stores learn nothing from it either.
    keeps_nothing: bool = False


Planner = Callable[[WorkingCapsule, ChangeContext, tuple[str, ...]], Applied]


@dataclass(frozen=True)
class Related:
    """The part of the capsule a plan can read: atoms of these keys or ids or with one of
    these topics, and their conflict partners (a request that may read any atom loads all)."""

    keys: tuple[str, ...]
    atom_ids: tuple[str, ...]
    topics: tuple[str, ...]


class CapsuleService:
    """Every capsule change is planned on a fresh working set and committed with its effects."""

    def __init__(
        self,
        store: CapsuleStore,
        dependencies: Dependencies,
        extractor: TurnExtractor,
        outbox: EffectOutbox,
    ) -> None:
        self._store = store
        self._deps = dependencies
        self._extractor = extractor
        self._outbox = outbox
        self._locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    def _lock(self, tenant_id: str, user_id: str) -> asyncio.Lock:
        lock = self._locks.get((tenant_id, user_id))
        if lock is None:
            lock = asyncio.Lock()
            self._locks[(tenant_id, user_id)] = lock
        return lock

    async def _mutate(
        self,
        tenant_id: str,
        user_id: str,
        marker: str,
        now_us: int,
        session_id: str,
        planner: Planner,
        related: Related | None = None,
        learning: Learning | None = None,
    ) -> Outcome:
        """Plan on fresh state and commit; the caller holds the user's lock."""
        for attempt in range(MAX_PLAN_ATTEMPTS):
            if await self._store.is_processed(tenant_id, user_id, marker):
                return Outcome(
                    duplicate=True, pending_effects=await self._pending(tenant_id, user_id)
                )
            ws = WorkingCapsule(await self._load(tenant_id, user_id, related))
            refs = (
                await self._store.session_refs(tenant_id, user_id, session_id) if session_id else ()
            )
            ctx = ChangeContext(tenant_id, user_id, marker, now_us, session_id)
            applied = planner(ws, ctx, refs)
            erasure = applied.plan.erasure if applied.plan is not None else None
            if erasure is None:
                erasure = applied.erasure
            # Patterns follow the facts and the forget (the caps, the evidence left).
            learned = learn(ws, ctx, learning, erasure) if learning is not None else None
            commit = CapsuleCommit(
                marker=marker,
                upserts=ws.upserts(),
                deletes=ws.deletes(),
                corrections=applied.corrections,
                rejections=[*applied.rejections, *(learned.proposals if learned else ())],
                provenance=applied.provenance,
                session_refs=(session_id, tuple(applied.touched))
                if session_id and applied.touched
                else None,
                effects=effects_of(ws, ctx, applied.events, applied.plan)
                + self._erasure_effects(erasure, ctx),
                turn_session=applied.turn_session,
                last_said=applied.last_said,
                erasure=local_erasure(erasure, ctx) if erasure is not None else None,
                observations=learned.write if learned is not None else None,
            )
            try:
                written = await self._store.commit(tenant_id, user_id, commit)
            except VersionMismatch:
                if attempt + 1 == MAX_PLAN_ATTEMPTS:
                    raise
                continue
            if not written:
                return Outcome(
                    duplicate=True, pending_effects=await self._pending(tenant_id, user_id)
                )
            # The effects are queued with the commit: the first attempt is made now.
            effects = queued_form(marker, commit.effects)
            if effects:
                await self._outbox.enqueue_and_deliver(
                    tenant_id,
                    user_id,
                    effects,
                    FIRST_ATTEMPT_S if commit.erasure is None else ERASURE_FIRST_ATTEMPT_S,
                )
            if commit.erasure is not None:
                # After the first delivery: the delivered effects carried the terms too.
                await self._store.reclaim_erased()
                self._extractor.forget_cached()
            pending = await self._pending(tenant_id, user_id)
            return Outcome(changes=tuple(ws.changes), plan=applied.plan, pending_effects=pending)
        raise AssertionError("unreachable")

    async def process(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> ProcessOutcome:
        """Extract from one turn and apply facts, correction and command; idempotent by turn id."""
        # Held from the first read: the forgets it must obey, and a "forget that" planned
        # meanwhile must see this turn as said.
        async with self._lock(tenant_id, user_id):
            return await self._process(tenant_id, user_id, turn, now_us)

    async def _process(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> ProcessOutcome:
        marker = f"turn:{turn.turn_id}"
        if await self._store.is_processed(tenant_id, user_id, marker):
            pending = await self._pending(tenant_id, user_id)
            return ProcessOutcome(
                False, (), None, "", None, (), Outcome(duplicate=True, pending_effects=pending)
            )
        late = await self._store.late_erasures(tenant_id, user_id, turn.turn_id, turn.session_id)
        # A turn that speaks of a subject the user said not to store keeps nothing, and the
        # sentences that speak of it leave the archive (the guard's rule judges only atoms).
        refused = blocked_words(tenant_id, user_id, turn.text, late)
        if refused or late.covers_turn(now_us):
            # Nothing of it is kept: only the local rules read it (for a command it may
            # carry), so its words never reach a semantic provider.
            extraction, provenance = extract_by_rules(turn.text, turn.role), None
        else:
            extraction, provenance = await self._extractor.extract(tenant_id, user_id, turn, now_us)
        keep_nothing = (
            extraction.command is Command.DO_NOT_STORE or late.covers_turn(now_us) or bool(refused)
        )
        facts = () if keep_nothing else extraction.facts
        # A turn said before a forget and extracted after it never brings the fact back.
        forgotten = late_dropped(tenant_id, user_id, facts, late, now_us)
        late_erasure = None
        dropped = [f for position, f in enumerate(facts) if position in forgotten]
        if late.covers_turn(now_us):
            # Said in a conversation (or by a user) forgotten since: the turn itself goes.
            late_erasure = Erasure(whole_turn_ids=(turn.turn_id,))
        elif forgotten:
            terms = late_terms(tenant_id, user_id, dropped, late)
            late_erasure = Erasure(turn_ids=(turn.turn_id,), terms=terms) if terms else None
        if refused and late_erasure is None:
            late_erasure = Erasure(turn_ids=(turn.turn_id,), terms=refused)
        # On the record by id and key only: the turn's words are refused.
        refused_facts = extraction.facts if refused and not late.covers_turn(now_us) else ()
        facts = tuple(f for position, f in enumerate(facts) if position not in forgotten)
        if keep_nothing or forgotten:
            provenance = None  # its hashes would still stand for the words
        thread_turns = await self._thread_turns(
            tenant_id, user_id, extraction.command, turn.session_id
        )
        # "Off the record, <something>" covers this turn, not what was said before it.
        own = extraction.command is Command.DO_NOT_STORE and carries_own_content(turn.text)
        said, last = await self._said(
            tenant_id, user_id, extraction.command, "" if own else turn.session_id
        )
        probe = ChangeContext(tenant_id, user_id, marker, now_us, turn.session_id)
        blocked = await self._blocked(tenant_id, user_id, facts, probe)
        learning = None
        if turn.role == "user":
            # What the user asks for is observed only in a turn that is kept and commands nothing.
            observed = (
                observe(turn.text, turn.turn_id, turn.session_id, now_us)
                if not keep_nothing and extraction.command is None and not extraction.correction
                else ()
            )
            learning = await self._learning(
                tenant_id,
                user_id,
                late_kept_observations(tenant_id, user_id, observed, late, now_us),
                probe,
            )
        rejections = [
            RejectionEntry(
                candidate_text=r.candidate_text,
                type=r.type,
                confidence_bp=r.confidence_bp,
                reason_code=r.reason_code.value,
                threshold_bp=r.threshold_bp or 0,
                details=";".join(f"{k}={v}" for k, v in r.details),
                turn_id=turn.turn_id,
                reject_time_us=now_us,
            )
            for r in extraction.rejections
            if not keep_nothing and not forgotten
        ]

        def planner(ws: WorkingCapsule, ctx: ChangeContext, refs: tuple[str, ...]) -> Applied:
            applied = Applied(
                rejections=rejections,
                provenance=[provenance] if provenance else [],
                turn_session=(turn.turn_id, turn.session_id) if turn.session_id else None,
                last_said=(turn.turn_id, turn.session_id)
                if turn.session_id and extraction.command is None and not keep_nothing
                else None,
                erasure=late_erasure,
            )
            if extraction.correction is not None:
                pair = extraction.correction
                apply_correction(ws, pair.heard, pair.meant, ctx)
                if turn.speaker_verified:
                    applied.corrections.append(
                        CorrectionPair(pair.heard, pair.meant, turn.turn_id, now_us)
                    )
                applied.events.append(correction_event(pair.heard, pair.meant, ctx))
            for fact, reason in [
                *((f, reasons.USER_FORGET) for f in dropped),
                *((f, reasons.DO_NOT_STORE_RULE) for f in refused_facts),
            ]:
                # Already forgotten when it was said, or on a subject not to be stored:
                # dropped, on the record by id and key.
                gone = replace(
                    new_atom(fact, ctx, provenance_of(None)),
                    text="",
                    critical_tokens=(),
                    topics=(),
                    evidence_turn_ids=(),
                )
                ws.record(change(ChangeKind.DROPPED, gone, reason))
            for position, fact in enumerate(facts):
                if position in blocked:
                    ws.record(
                        change(
                            ChangeKind.DROPPED,
                            new_atom(fact, ctx, provenance_of(provenance)),
                            reasons.DO_NOT_STORE_RULE,
                        )
                    )
                else:
                    apply_fact(ws, fact, ctx, provenance_of(provenance))
            command = extraction.command
            if command is not None and command is not Command.CORRECTION:
                target = extraction.command_target or ""
                applied.plan = plan_command(
                    ws,
                    command,
                    target,
                    () if own else refs,
                    ctx,
                    thread_id=turn.session_id,
                    command_turn_id=turn.turn_id,
                    thread_turn_ids=thread_turns,
                    said_turn_ids=said,
                    last_said=last,
                )
                applied.events.append(command_event(applied.plan, target, ctx))
            used = [] if command is not None else record_use(ws, referenced_ids(ws, turn.text), ctx)
            applied.touched = list(dict.fromkeys([*ws.touched_ids(), *used]))
            return applied

        # A turn of facts alone reads only the atoms it may change or refer to; a correction or
        # a command may name any atom, so it reads them all.
        related = None
        if extraction.correction is None and extraction.command is None:
            ids = [atom_id_of(tenant_id, user_id, fact.key, fact.text) for fact in facts]
            related = Related(
                tuple(
                    sorted({fact.key for fact in facts} | set(learning.keys() if learning else ()))
                ),
                tuple(sorted(set(ids))),
                tuple(sorted(turn_words(turn.text))),
            )
        outcome = await self._mutate(
            tenant_id, user_id, marker, now_us, turn.session_id, planner, related, learning
        )
        return ProcessOutcome(
            relevant=extraction.relevant and bool(facts),
            facts=tuple(facts),
            command=extraction.command,
            command_target=extraction.command_target or "",
            correction=extraction.correction,
            rejections=tuple(rejections),
            outcome=outcome,
            keeps_nothing=keep_nothing or bool(forgotten),
        )

    async def _blocked(
        self, tenant_id: str, user_id: str, facts: tuple[ExtractedFact, ...], ctx: ChangeContext
    ) -> set[int]:
        """Positions of facts a do-not-store rule forbids; a guard that does not answer fails
        the request (DependencyFailed naming it), so nothing is stored unchecked."""
        if not facts:
            return set()
        atoms = [new_atom(fact, ctx, provenance_of(None)) for fact in facts]
        verdicts = await asyncio.gather(
            *(self._deps.guard.may_store(tenant_id, user_id, a) for a in atoms)
        )
        return {position for position, allowed in enumerate(verdicts) if not allowed}

    async def _learning(
        self,
        tenant_id: str,
        user_id: str,
        observed: tuple[Observation, ...],
        ctx: ChangeContext,
    ) -> Learning:
        """The learner's input: the user's observations, the turn's, and the signatures whose
        pattern a do-not-store rule refuses (a guard that does not answer fails the request)."""
        learning = Learning(tuple(await self._store.observations(tenant_id, user_id)), observed)
        candidates = candidate_atoms(learning, ctx) if observed else []
        verdicts = await asyncio.gather(
            *(self._deps.guard.may_store(tenant_id, user_id, atom) for _, atom in candidates)
        )
        refused = frozenset(
            s for (s, _), allowed in zip(candidates, verdicts, strict=True) if not allowed
        )
        return replace(learning, refused=refused) if refused else learning

    async def run_command(
        self,
        tenant_id: str,
        user_id: str,
        command: Command,
        target: str,
        session_id: str,
        request_id: str,
        now_us: int,
    ) -> Outcome:
        """Run a user control command directly; idempotent by request id."""
        # Held from the first read: which turn was said last ("that") and which turns a
        # conversation had must not change before the plan is committed.
        async with self._lock(tenant_id, user_id):
            marker = (
                f"command:{request_id or digest(command.value, target, session_id, str(now_us))}"
            )
            thread_id = target or session_id
            thread_turns = await self._thread_turns(tenant_id, user_id, command, thread_id)
            said, last = await self._said(tenant_id, user_id, command, session_id)

            def planner(ws: WorkingCapsule, ctx: ChangeContext, refs: tuple[str, ...]) -> Applied:
                plan = plan_command(
                    ws,
                    command,
                    target,
                    refs,
                    ctx,
                    thread_id=thread_id,
                    thread_turn_ids=thread_turns,
                    said_turn_ids=said,
                    last_said=last,
                )
                return Applied(events=[command_event(plan, target, ctx)], plan=plan)

            learning = Learning(tuple(await self._store.observations(tenant_id, user_id)))
            return await self._mutate(
                tenant_id, user_id, marker, now_us, session_id, planner, learning=learning
            )

    async def forget(
        self,
        tenant_id: str,
        user_id: str,
        atom_ids: list[str],
        target: str,
        session_id: str,
        last_referenced: bool,
        reason: str,
        now_us: int,
    ) -> Outcome:
        """Forget atoms named by id, by target, or last referenced in the session."""
        # Held from the first read, as for a command: the turn said last must not change.
        async with self._lock(tenant_id, user_id):
            marker = "forget:" + digest(
                ",".join(sorted(atom_ids)),
                target,
                session_id,
                str(last_referenced),
                reason,
                str(now_us),
            )

            said, last = await self._said(
                tenant_id, user_id, Command.FORGET, session_id if last_referenced else ""
            )

            def planner(ws: WorkingCapsule, ctx: ChangeContext, refs: tuple[str, ...]) -> Applied:
                chosen = (
                    {a.atom_id: a for a in matching_atoms(ws, target, include_superseded=True)}
                    if target
                    else {}
                )
                for atom_id in [*atom_ids, *(refs if last_referenced else ())]:
                    atom = ws.get(atom_id)
                    if atom is not None:
                        chosen[atom_id] = atom
                atoms = list(chosen.values())
                forgotten = forget(ws, atoms, ctx, reason)
                # The same reach as a spoken forget: the user's turns holding the forgotten terms,
                # devices, logs, late extractions.
                return Applied(
                    erasure=erasure_of(
                        atoms,
                        forgotten,
                        target,
                        ctx,
                        "",
                        whole_turn=False,
                        said_turn_ids=said,
                        said_last=last if last_referenced else "",
                    )
                )

            learning = Learning(tuple(await self._store.observations(tenant_id, user_id)))
            return await self._mutate(
                tenant_id,
                user_id,
                marker,
                now_us,
                session_id if last_referenced else "",
                planner,
                learning=learning,
            )

    async def correct(
        self, tenant_id: str, user_id: str, heard: str, meant: str, turn_id: str, now_us: int
    ) -> Outcome:
        """Capture a heard -> meant pair and update the one atom that holds the misheard value."""

        def planner(ws: WorkingCapsule, ctx: ChangeContext, refs: tuple[str, ...]) -> Applied:
            apply_correction(ws, heard, meant, ctx)
            return Applied(
                events=[correction_event(heard, meant, ctx)],
                corrections=[CorrectionPair(heard, meant, turn_id, now_us)],
            )

        async with self._lock(tenant_id, user_id):
            return await self._mutate(tenant_id, user_id, f"turn:{turn_id}", now_us, "", planner)

    async def confirm(
        self, tenant_id: str, user_id: str, atom_id: str, turn_id: str, now_us: int
    ) -> Outcome:
        """The user confirmed an atom (answering the one clarification question)."""
        marker = f"turn:{turn_id}" if turn_id else "confirm:" + digest(atom_id, str(now_us))

        def planner(ws: WorkingCapsule, ctx: ChangeContext, refs: tuple[str, ...]) -> Applied:
            confirm_atom(ws, atom_id, ctx)
            return Applied()

        async with self._lock(tenant_id, user_id):
            return await self._mutate(tenant_id, user_id, marker, now_us, "", planner)

    async def mark(
        self,
        tenant_id: str,
        user_id: str,
        target: str,
        session_id: str,
        flags: MarkFlags,
        now_us: int,
    ) -> Outcome:
        """Set pull-only, pinned or exposure on the atoms a target names (or last referenced)."""
        marker = "mark:" + digest(target, session_id, repr(flags), str(now_us))

        def planner(ws: WorkingCapsule, ctx: ChangeContext, refs: tuple[str, ...]) -> Applied:
            atoms = (
                matching_atoms(ws, target, include_superseded=False)
                if target
                else [a for a in map(ws.get, refs) if a]
            )
            for atom in atoms:
                marked = flags.applied_to(atom)
                if marked != atom:
                    ws.put(marked, change(ChangeKind.MARKED, marked, reasons.MARK_REQUEST))
            return Applied()

        async with self._lock(tenant_id, user_id):
            return await self._mutate(
                tenant_id, user_id, marker, now_us, session_id if not target else "", planner
            )

    async def list_atoms(
        self, tenant_id: str, user_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[AtomRecord]:
        return await self._store.list_atoms(tenant_id, user_id, after, limit)

    async def list_rejections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[RejectionEntry]:
        return await self._store.list_rejections(tenant_id, user_id, limit)

    async def list_provenance(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[ProvenanceEntry]:
        return await self._store.list_provenance(tenant_id, user_id, limit)

    async def list_corrections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[CorrectionPair]:
        return await self._store.list_corrections(tenant_id, user_id, limit)

    async def _load(
        self, tenant_id: str, user_id: str, related: Related | None
    ) -> list[AtomRecord]:
        if related is None:
            return await self._store.load_atoms(tenant_id, user_id)
        return await self._store.load_related(
            tenant_id, user_id, related.keys, related.atom_ids, related.topics
        )

    def _erasure_effects(self, erasure: Erasure | None, ctx: ChangeContext) -> list[Effect]:
        """The forget's effects on other engines (none for devices in a mesh without them)."""
        if erasure is None:
            return []
        effects = erasure_effects(erasure, ctx)
        if self._deps.devices is None:
            effects = [e for e in effects if not e.kind.startswith("DEVICE_")]
        return effects

    async def _thread_turns(
        self, tenant_id: str, user_id: str, command: Command | None, session_id: str
    ) -> frozenset[str]:
        """The turns of a conversation to forget, as the extractor saw them."""
        if command is not Command.FORGET_THREAD or not session_id:
            return frozenset()
        return frozenset(await self._store.session_turns(tenant_id, user_id, session_id))

    async def _said(
        self, tenant_id: str, user_id: str, command: Command | None, session_id: str
    ) -> tuple[frozenset[str], str]:
        """For a forget: every turn of the user the extractor saw (where the forgotten terms
        are cut) and the last turn said in the session (no command) ("forget that")."""
        if command not in (Command.FORGET, Command.DO_NOT_STORE):
            return frozenset(), ""
        said = frozenset(await self._store.user_turns(tenant_id, user_id))
        last = await self._store.last_said(tenant_id, user_id, session_id) if session_id else ""
        return said, last

    async def effect_tally(self, tenant_id: str, user_id: str) -> list[tuple[str, str, int]]:
        """The user's effects as (state, kind, count): state "pending" or "dead"."""
        return await self._outbox.tally(tenant_id, user_id)

    async def _pending(self, tenant_id: str, user_id: str) -> int:
        """How many of the user's effects wait for the drainer."""
        return await self._outbox.count_pending(tenant_id, user_id)
