"""Command, sessions, Remember and the operator's DebugUser: thin calls with deadlines."""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from dataclasses import dataclass

from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.effects import (
    EXTRACT,
    ErasingOutbox,
    SpokenCommand,
    deliver_queued_extractions,
    drop_forgotten,
    effect_counts,
)
from memmesh.engines.gateway.mapping import atom_counts, extractor_command
from memmesh.engines.gateway.ports import (
    CapsulePeer,
    CurrentStatePeer,
    ExposureGuardPeer,
    SessionsPeer,
)
from memmesh.engines.gateway.resume import ThreadResumer
from memmesh.engines.gateway.work_orders import COMMANDS as WORK_ORDER_COMMANDS
from memmesh.engines.gateway.work_orders import WorkOrderHandler
from memmesh.errors import DependencyFailed, FieldViolation, InvalidInput
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

# The capsule is read in pages of this size for "what do you remember about me?".
ATOM_PAGE = 1000
# RecallSummary accepts at most this many atoms.
MAX_RECALL_ATOMS = 20_000
# The reason recorded with the rules a command sets.
COMMAND_REASON = "USER_COMMAND"
# Commands whose requested rules are remembered for their retries.
REMEMBERED_COMMANDS = 4096
# Commands that set exposure rules, as the gateway and the extractor number them.
RULE_COMMANDS = frozenset(
    {
        pb.USER_COMMAND_DO_NOT_MENTION,
        pb.USER_COMMAND_DO_NOT_STORE,
        pb.USER_COMMAND_PULL_ONLY,
    }
)
# Spoken commands whose rules a Brief must obey (a do-not-store rule gates storing, not
# Briefs: what it covers is forgotten by the extraction itself).
SPOKEN_RULE_COMMANDS = frozenset(
    {extractor_pb.COMMAND_DO_NOT_MENTION, extractor_pb.COMMAND_PULL_ONLY}
)
# A Brief settling a held erasure spends at most this share of its time left on it, and
# asks the extractor this often whether its effects are through.
ERASURE_WAIT_SHARE = 0.5
ERASURE_POLL_S = 0.05
# Commands whose empty target means "that": the last thing the user said.
DEICTIC_COMMANDS = frozenset(
    {
        pb.USER_COMMAND_FORGET,
        pb.USER_COMMAND_DO_NOT_STORE,
        pb.USER_COMMAND_PULL_ONLY,
        pb.USER_COMMAND_DO_NOT_MENTION,
    }
)
# Such a command spends at most this share of its time getting earlier turns extracted.
EARLIER_TURNS_WAIT_SHARE = 0.5
# Commands that take the user's words out of every copy.
ERASURE_COMMANDS = frozenset(
    {
        extractor_pb.COMMAND_FORGET,
        extractor_pb.COMMAND_DO_NOT_STORE,
        extractor_pb.COMMAND_FORGET_THREAD,
        extractor_pb.COMMAND_FORGET_EVERYTHING,
        extractor_pb.COMMAND_FORGET_TONE,
    }
)


class ControlHandler:
    def __init__(
        self,
        threads: SessionsPeer,
        state: CurrentStatePeer,
        extractor: CapsulePeer,
        guard: ExposureGuardPeer,
        outbox: ErasingOutbox,
        budget_s: float,
        held: HeldCommands | None = None,
        resumer: ThreadResumer | None = None,
        work_orders: WorkOrderHandler | None = None,
    ) -> None:
        self._threads = threads
        self._resumer = resumer
        # "Cancel that" / "forget that" about a work order: CurrentState's, not the capsule's.
        self._work_orders = work_orders
        self._state = state
        self._extractor = extractor
        self._guard = guard
        self._outbox = outbox
        self._budget_s = budget_s
        # Erasures acknowledged with effects still queued, settled by the next Brief.
        self._held = held
        # The rules recent commands requested, by request, for their retries.
        self._requested: OrderedDict[bytes, tuple[str, ...]] = OrderedDict()

    async def command(
        self, request: pb.CommandRequest, inbound: float | None
    ) -> pb.CommandResponse:
        """Run a user control command through the AtomExtractor (RESUME_THREAD through the
        ThreadStore, the work order commands through CurrentState: nothing of the capsule
        changes)."""
        if request.command in WORK_ORDER_COMMANDS:
            if self._work_orders is None:
                raise InvalidInput([FieldViolation("command", "work orders are not served")])
            return await self._work_orders.command(request, inbound)
        budget = TurnBudget(self._budget_s, inbound)
        if request.command == pb.USER_COMMAND_RESUME_THREAD and self._resumer is not None:
            found = await self._resumer.resume(
                request.scope, request.session_id, request.target, request.now, budget.remaining_s()
            )
            return pb.CommandResponse(
                reason_code="USER_COMMAND_RESUME_THREAD" if found.found else "THREAD_NOT_FOUND"
            )
        if request.command in DEICTIC_COMMANDS and not request.target.strip():
            # The extractor resolves "that" to the last turn it has extracted, so a turn whose
            # extraction is still queued goes first (as a spoken command's own extraction
            # waits behind it in the user's lane); otherwise the command would act on the
            # turn before, and the late extraction would keep what the user asked to forget.
            await deliver_queued_extractions(
                self._outbox, request.scope, budget.remaining_s() * EARLIER_TURNS_WAIT_SHARE
            )
        run = extractor_pb.RunCommandRequest(
            scope=request.scope,
            command=extractor_command(request.command),
            target=request.target,
            session_id=request.session_id,
            now=request.now,
        )
        reply = await self._extractor.run_command(run, budget.remaining_s())
        if reply.HasField("erasure"):
            # The gateway's own queued copies of the forgotten words go too.
            await drop_forgotten(self._outbox, request.scope, reply.erasure, request.now)
        key = request.SerializeToString(deterministic=True)
        labels = requested_rules(reply, self._requested.get(key), request.command in RULE_COMMANDS)
        if labels:
            # A retry of this command (after a refusal below) finds its rules here.
            self._requested[key] = labels
            while len(self._requested) > REMEMBERED_COMMANDS:
                self._requested.popitem(last=False)
        await enforce_rules(self._guard, request.scope, request.now, labels, budget)
        if self._held is not None:
            self._held.sent(
                request.scope, hashlib.sha256(key).hexdigest(), run.command, reply, request.now
            )
        reasons = sorted({change.reason_code for change in reply.changes if change.reason_code})
        name = pb.UserCommand.Name(request.command).removeprefix("USER_COMMAND_")
        return pb.CommandResponse(
            atom_ids=sorted(
                {change.atom.atom_id for change in reply.changes if change.atom.atom_id}
            ),
            reason_code=reasons[0] if len(reasons) == 1 else f"USER_COMMAND_{name}",
        )

    async def open_session(
        self, request: pb.OpenSessionRequest, inbound: float | None
    ) -> pb.OpenSessionResponse:
        """Whether the session starts now (ThreadStore's session rules)."""
        budget = TurnBudget(self._budget_s, inbound)
        reply = await self._threads.open_session(
            thread_pb.OpenSessionRequest(
                scope=request.scope, session_id=request.session_id, now=request.now
            ),
            budget.remaining_s(),
        )
        return pb.OpenSessionResponse(mode=reply.mode)

    async def close_session(
        self, request: pb.CloseSessionRequest, inbound: float | None
    ) -> pb.CloseSessionResponse:
        """Close the session (the ThreadStore indexes its digest and episode digests itself)."""
        budget = TurnBudget(self._budget_s, inbound)
        close = thread_pb.CloseSessionRequest(
            scope=request.scope, session_id=request.session_id, now=request.now
        )
        reply = await self._threads.close_session(close, budget.remaining_s())
        return pb.CloseSessionResponse(digest_summary=reply.digest.summary)

    async def _all_atoms(
        self, scope: scope_pb2.UserScope, budget: TurnBudget
    ) -> list[memory_pb2.Atom]:
        atoms: list[memory_pb2.Atom] = []
        token = ""
        while len(atoms) < MAX_RECALL_ATOMS:
            page = await self._extractor.list_atoms(
                extractor_pb.ListAtomsRequest(scope=scope, page_size=ATOM_PAGE, page_token=token),
                budget.remaining_s(),
            )
            atoms.extend(page.atoms)
            token = page.next_page_token
            if not token:
                break
        return atoms[:MAX_RECALL_ATOMS]

    async def remember(
        self, request: pb.RememberRequest, inbound: float | None
    ) -> pb.RememberResponse:
        """The bounded safe summary; nothing for an unverified speaker."""
        if not request.identity_verified:
            return pb.RememberResponse()
        budget = TurnBudget(self._budget_s, inbound)
        atoms = await self._all_atoms(request.scope, budget)
        if not atoms:
            return pb.RememberResponse()
        # Text-only items are not read aloud in a spoken summary.
        summary = await self._guard.recall_summary(
            guard_pb.RecallSummaryRequest(
                scope=request.scope, channel=request.channel, atoms=atoms, speak_text_allowed=False
            ),
            budget.remaining_s(),
        )
        return pb.RememberResponse(items=summary.items)

    async def debug_user(
        self, request: pb.DebugUserRequest, inbound: float | None
    ) -> pb.DebugUserResponse:
        """Operator view: last session, last interaction, atom counts by status, queued extractions."""
        budget = TurnBudget(self._budget_s, inbound)
        scope = request.scope
        state = await self._state.get(state_pb.GetRequest(scope=scope), budget.remaining_s())
        try:
            counts = atom_counts(await self._all_atoms(scope, budget))
        except DependencyFailed:
            # The operator view degrades rather than fails while the capsule is down.
            counts = ["atom_extractor=UNAVAILABLE"]
        effects, dead = effect_counts(await self._outbox.tally(scope.tenant_id, scope.user_id))
        try:
            theirs = await self._extractor.list_effects(
                extractor_pb.ListEffectsRequest(scope=scope), budget.remaining_s()
            )
            effects += [f"atom_extractor/{entry}" for entry in theirs.effects]
            dead += theirs.dead_effects
        except DependencyFailed:
            effects.append("atom_extractor=UNAVAILABLE")
        response = pb.DebugUserResponse(
            last_session_id=state.state.last_session_id,
            atom_counts=counts,
            pending_extractions=await self._outbox.count_pending(
                scope.tenant_id, scope.user_id, EXTRACT
            ),
            effects=effects,
            dead_effects=dead,
        )
        if state.state.HasField("last_interaction_time"):
            response.last_interaction_time.CopyFrom(state.state.last_interaction_time)
        return response


def requested_rules(
    reply: extractor_pb.RunCommandResponse, known: tuple[str, ...] | None, sets_rules: bool
) -> tuple[str, ...]:
    """The rules a command requested: the extractor's answer, or for a retried command the
    extractor already ran (its answer names none) those remembered from the first run. With
    neither, the command counts as in force only once the extractor has no effects left
    queued for the user (its rules among them): DependencyFailed until then."""
    if not reply.duplicate:
        return tuple(reply.rules_requested)
    if known is not None:
        return known
    if reply.pending_effects and sets_rules:
        raise DependencyFailed(
            "atom_extractor", "UNAVAILABLE", "the command's effects are still queued"
        )
    return ()


async def enforce_rules(
    guard: ExposureGuardPeer,
    scope: scope_pb2.UserScope,
    now: Timestamp,
    labels: tuple[str, ...],
    budget: TurnBudget,
) -> None:
    """A command is acknowledged only once its exposure rules are in force for the next
    Brief: each rule the extractor requested ("KIND:TARGET_TYPE:target") is set on the
    ExposureGuard now (setting a rule the extractor's own queued effect set already changes
    nothing), and a guard that does not answer fails the command (UNAVAILABLE naming
    exposure_guard). The other way, the gateway holding pending rules and applying them at
    its final gate, would need a second copy of the guard's matching (subject terms
    included) here; and while the guard is down every Brief fails closed anyway, so refusing
    the acknowledgement loses nothing."""
    for label in labels:
        kind, target_type, target = label.split(":", 2)
        await guard.set_rule(
            guard_pb.SetRuleRequest(
                scope=scope,
                rule=guard_pb.Rule(
                    kind=guard_pb.RuleKind.Value(f"RULE_KIND_{kind}"),
                    target_type=guard_pb.TargetType.Value(f"TARGET_TYPE_{target_type}"),
                    target=target,
                ),
                now=now,
                reason_code=COMMAND_REASON,
            ),
            budget.remaining_s(),
        )


@dataclass
class HeardCommand:
    """A privacy command not known to be in force yet. A rule command keeps what it takes to
    run it again (and the rules it requested, once the extractor has named them); an
    erasure only waits for its effects to be through."""

    command: extractor_pb.Command.ValueType
    target: str
    session_id: str
    turn_id: str
    now: Timestamp
    rules: tuple[str, ...] | None = None


class HeldCommands:
    """Privacy commands whose effects were still queued when they were acknowledged, held
    until they are in force: the user's next Brief settles them first and fails closed
    while it cannot, so it always obeys what was said or sent.

    - A spoken rule command (do not mention, pull only) is run onto the ExposureGuard by
      the Brief itself.
    - An erasure (forget, do not store, forget the thread, forget everything), spoken or
      sent through Command, is in force once nothing of it is queued: the turn's extraction
      in the gateway's outbox, the extractor's effects (archive, index, devices, guard), and
      behind them the ThreadStore's index changes (the extractor's effect waits for those).
      Until then the archive or the index may still hold the words.

    Held in this gateway process (a restart or another gateway replica falls back to the
    queued effects alone)."""

    def __init__(
        self, extractor: CapsulePeer, guard: ExposureGuardPeer, outbox: ErasingOutbox
    ) -> None:
        self._extractor = extractor
        self._guard = guard
        self._outbox = outbox
        self._held: dict[tuple[str, str], dict[str, HeardCommand]] = {}

    def heard(
        self,
        scope: scope_pb2.UserScope,
        turn: memory_pb2.Turn,
        spoken: SpokenCommand | None,
        processed: extractor_pb.ProcessResponse | None,
    ) -> None:
        """Hold the turn's privacy command unless the extraction shows it fully delivered."""
        if processed is not None:
            if not processed.pending_effects:
                return
            command, target = processed.command, processed.command_target
        elif spoken is not None:
            command, target = spoken.command, spoken.target
        else:
            return
        self._hold(scope, HeardCommand(command, target, turn.session_id, turn.turn_id, turn.time))

    def sent(
        self,
        scope: scope_pb2.UserScope,
        request_key: str,
        command: extractor_pb.Command.ValueType,
        reply: extractor_pb.RunCommandResponse,
        now: Timestamp,
    ) -> None:
        """Hold a Command's erasure whose effects are still queued (its rules, if any, are
        in force before Command answers)."""
        if reply.pending_effects and command in ERASURE_COMMANDS:
            self._hold(scope, HeardCommand(command, "", "", request_key, now, rules=()))

    def _hold(self, scope: scope_pb2.UserScope, heard: HeardCommand) -> None:
        if heard.command in SPOKEN_RULE_COMMANDS or heard.command in ERASURE_COMMANDS:
            held = self._held.setdefault((scope.tenant_id, scope.user_id), {})
            held[heard.turn_id] = heard

    async def settle(self, scope: scope_pb2.UserScope, budget: TurnBudget) -> None:
        """Put the user's held commands in force; DependencyFailed while that fails."""
        held = self._held.get((scope.tenant_id, scope.user_id))
        if not held:
            return
        # One check covers every held erasure: it waits for all of the user's effects.
        erasures = [key for key, heard in held.items() if heard.command in ERASURE_COMMANDS]
        if erasures:
            await self._erased(scope, budget)
            for key in erasures:
                held.pop(key, None)
        for key, heard in sorted(held.items()):
            if heard.rules is None:
                reply = await self._extractor.run_command(
                    extractor_pb.RunCommandRequest(
                        scope=scope,
                        command=heard.command,
                        target=heard.target,
                        session_id=heard.session_id,
                        now=heard.now,
                        request_id=f"spoken-{key}"[:128],
                    ),
                    budget.remaining_s(),
                )
                heard.rules = requested_rules(reply, None, True)
            await enforce_rules(self._guard, scope, heard.now, heard.rules, budget)
            held.pop(key, None)
        if not held:
            self._held.pop((scope.tenant_id, scope.user_id), None)

    async def _erased(self, scope: scope_pb2.UserScope, budget: TurnBudget) -> None:
        """Nothing of the user's erasures is queued any more; DependencyFailed otherwise.
        Half of what is left of the Brief may go to getting them through: the gateway's own
        queued extraction is delivered now, the extractor's effects are waited for."""
        waited = TurnBudget(budget.remaining_s() * ERASURE_WAIT_SHARE)
        await deliver_queued_extractions(self._outbox, scope, waited.remaining_s())
        while True:
            effects = await self._extractor.list_effects(
                extractor_pb.ListEffectsRequest(scope=scope), budget.remaining_s()
            )
            if not any(entry.startswith("pending:") for entry in effects.effects):
                return
            if waited.remaining_s() < ERASURE_POLL_S:
                raise DependencyFailed(
                    "atom_extractor", "UNAVAILABLE", "a forget's effects are still queued"
                )
            await asyncio.sleep(ERASURE_POLL_S)
