"""Command, sessions, Remember and the operator's DebugUser: thin calls with deadlines."""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.effects import EXTRACT, ErasingOutbox, drop_forgotten, effect_counts
from memmesh.engines.gateway.mapping import atom_counts, extractor_command
from memmesh.engines.gateway.ports import (
    CapsulePeer,
    CurrentStatePeer,
    ExposureGuardPeer,
    SessionsPeer,
)
from memmesh.errors import DependencyFailed
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

# The capsule is read in pages of this size for "what do you remember about me?".
ATOM_PAGE = 1000
# RecallSummary accepts at most this many atoms.
MAX_RECALL_ATOMS = 20_000
# The reason recorded with the rules a command sets.
COMMAND_REASON = "USER_COMMAND"
# Commands that set exposure rules.
RULE_COMMANDS = frozenset(
    {
        pb.USER_COMMAND_DO_NOT_MENTION,
        pb.USER_COMMAND_DO_NOT_STORE,
        pb.USER_COMMAND_PULL_ONLY,
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
    ) -> None:
        self._threads = threads
        self._state = state
        self._extractor = extractor
        self._guard = guard
        self._outbox = outbox
        self._budget_s = budget_s

    async def command(
        self, request: pb.CommandRequest, inbound: float | None
    ) -> pb.CommandResponse:
        """Run a user control command through the AtomExtractor."""
        budget = TurnBudget(self._budget_s, inbound)
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
            await drop_forgotten(
                self._outbox, request.scope.tenant_id, request.scope.user_id, reply.erasure
            )
        await self._enforce(request, reply, budget)
        reasons = sorted({change.reason_code for change in reply.changes if change.reason_code})
        name = pb.UserCommand.Name(request.command).removeprefix("USER_COMMAND_")
        return pb.CommandResponse(
            atom_ids=sorted(
                {change.atom.atom_id for change in reply.changes if change.atom.atom_id}
            ),
            reason_code=reasons[0] if len(reasons) == 1 else f"USER_COMMAND_{name}",
        )

    async def _enforce(
        self, request: pb.CommandRequest, reply: extractor_pb.RunCommandResponse, budget: TurnBudget
    ) -> None:
        """A command is acknowledged only once its exposure rules are in force for the next
        Brief: each rule the extractor requested is set on the ExposureGuard now (setting a
        rule the extractor's own queued effect set already changes nothing), and a guard that
        does not answer fails the command (UNAVAILABLE naming exposure_guard). The other way,
        the gateway holding pending rules and applying them at its final gate, would need a
        second copy of the guard's matching (subject terms included) here; and while the guard
        is down every Brief fails closed anyway, so refusing the acknowledgement loses nothing.
        A retried command the extractor already ran names no rules: it is acknowledged only
        once the extractor has no effects left queued for the user (its rules among them)."""
        for label in reply.rules_requested:
            kind, target_type, target = label.split(":", 2)
            await self._guard.set_rule(
                guard_pb.SetRuleRequest(
                    scope=request.scope,
                    rule=guard_pb.Rule(
                        kind=guard_pb.RuleKind.Value(f"RULE_KIND_{kind}"),
                        target_type=guard_pb.TargetType.Value(f"TARGET_TYPE_{target_type}"),
                        target=target,
                    ),
                    now=request.now,
                    reason_code=COMMAND_REASON,
                ),
                budget.remaining_s(),
            )
        if reply.duplicate and reply.pending_effects and request.command in RULE_COMMANDS:
            raise DependencyFailed(
                "atom_extractor", "UNAVAILABLE", "the command's effects are still queued"
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
