"""The derived effects of an archived turn (DESIGN.md, per-turn flow): recording the
interaction, extracting its facts and filling empty profile fields they state. Each is
queued in the gateway's outbox once the turn is archived and delivered by a handler here;
every one is idempotent by the turn id, so a second delivery changes nothing. (Indexing is
not the gateway's: the ThreadStore feeds the index the turns and digests it archives.)"""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import DecodeError, Message

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.mapping import applied_changes
from memmesh.engines.gateway.ports import CurrentStatePeer, ExtractionPeer
from memmesh.extraction.profile import PROFILE_REASON, stated_profile
from memmesh.outbox import Done, Effect, EffectRejected, Handler, QueuedEffect

RECORD_INTERACTION = "record_interaction"
EXTRACT = "extract"
FILL_PROFILE = "fill_profile"
# One lane per peer engine: one engine's outage holds back only the effects bound for it,
# and each engine sees a user's effects in the order the turns came.
STATE_LANE = "current_state"
EXTRACTOR_LANE = "atom_extractor"
INTERACTION_REASON = "TURN_INGESTED"
M = TypeVar("M", bound=Message)


def extract_key(turn_id: str) -> str:
    """The outbox key of a turn's extraction."""
    return f"{EXTRACT}:{turn_id}"


def extract_effect(scope: scope_pb2.UserScope, turn: memory_pb2.Turn) -> Effect:
    """Extraction of a user turn (the turn as archived text, role and time)."""
    said = memory_pb2.Turn(
        turn_id=turn.turn_id,
        session_id=turn.session_id,
        role=memory_pb2.ROLE_USER,
        text=turn.text,
        time=turn.time,
    )
    request = extractor_pb.ProcessRequest(scope=scope, turn=said, now=turn.time)
    return Effect(EXTRACT, request.SerializeToString(), extract_key(turn.turn_id), EXTRACTOR_LANE)


def turn_effects(scope: scope_pb2.UserScope, turn: memory_pb2.Turn) -> list[Effect]:
    """What follows the archiving of a user turn, in the order it is to happen (none for others)."""
    effects: list[Effect] = []
    if turn.role != memory_pb2.ROLE_USER:
        return effects
    record = state_pb.ApplyRequest(
        scope=scope,
        change=state_pb.StateChange(
            record_interaction=state_pb.InteractionRecord(
                session_id=turn.session_id, interaction_time=turn.time
            )
        ),
        any_version=True,
        reason_code=INTERACTION_REASON,
        idempotency_key=f"interaction:{turn.turn_id}"[:128],
        now=turn.time,
    )
    effects.append(
        Effect(
            RECORD_INTERACTION,
            record.SerializeToString(),
            f"{RECORD_INTERACTION}:{turn.turn_id}",
            STATE_LANE,
        )
    )
    effects.append(extract_effect(scope, turn))
    return effects


def fill_profile_effects(
    request: extractor_pb.ProcessRequest, processed: extractor_pb.ProcessResponse
) -> list[Effect]:
    """One blind fill of the profile fields the extraction's adopted facts state; Current State
    sets those still empty (none when the turn states none)."""
    stated = stated_profile(applied_changes(processed))
    if not stated:
        return []
    turn_id = request.turn.turn_id
    apply = state_pb.ApplyRequest(
        scope=request.scope,
        change=state_pb.StateChange(fill_empty_profile=state_pb.ProfileFill(**stated)),
        any_version=True,
        reason_code=PROFILE_REASON,
        idempotency_key=f"profile:{turn_id}"[:128],
        now=request.turn.time,
    )
    return [
        Effect(FILL_PROFILE, apply.SerializeToString(), f"{FILL_PROFILE}:{turn_id}", STATE_LANE)
    ]


def _decoded(message: type[M], effect: QueuedEffect) -> M:
    try:
        return message.FromString(effect.payload)
    except DecodeError as error:
        raise EffectRejected(f"undecodable {effect.kind} payload") from error


class EffectHandlers:
    """Delivery of each effect kind to the peer that owns it."""

    def __init__(self, state: CurrentStatePeer, extractor: ExtractionPeer) -> None:
        self._state = state
        self._extractor = extractor

    def by_kind(self) -> dict[str, Handler]:
        """The outbox handlers."""
        return {
            RECORD_INTERACTION: self.record_interaction,
            EXTRACT: self.extract,
            FILL_PROFILE: self.fill_profile,
        }

    async def record_interaction(self, effect: QueuedEffect, timeout_s: float) -> object:
        return await self._state.apply(_decoded(state_pb.ApplyRequest, effect), timeout_s)

    async def extract(self, effect: QueuedEffect, timeout_s: float) -> object:
        """Extract the turn; the profile fields it states are filled next, as their own effects."""
        request = _decoded(extractor_pb.ProcessRequest, effect)
        processed = await self._extractor.process(request, timeout_s)
        return Done(processed, then=tuple(fill_profile_effects(request, processed)))

    async def fill_profile(self, effect: QueuedEffect, timeout_s: float) -> object:
        """Current State sets each field only while it is empty (it stays the authority)."""
        request = _decoded(state_pb.ApplyRequest, effect)
        field = str(request.change.WhichOneof("change"))
        if field.startswith("set_"):
            # Queued before fills were Current State's own change: one field, set only if empty.
            value = getattr(request.change, field)
            request.change.fill_empty_profile.CopyFrom(
                state_pb.ProfileFill(**{field.removeprefix("set_"): value})
            )
            request.any_version = True
        return await self._state.apply(request, timeout_s)
