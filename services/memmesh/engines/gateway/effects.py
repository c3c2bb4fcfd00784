"""The derived effects of an archived turn (DESIGN.md, per-turn flow): recording the
interaction, extracting its facts and filling empty profile fields they state. Each is
queued in the gateway's outbox once the turn is archived and delivered by a handler here;
every one is idempotent by the turn id, so a second delivery changes nothing. (Indexing is
not the gateway's: the ThreadStore feeds the index the turns and digests it archives.)"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol, TypeVar

from google.protobuf import timestamp_pb2
from google.protobuf.message import DecodeError, Message

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.gateway.mapping import applied_changes
from memmesh.engines.gateway.ports import (
    CurrentStatePeer,
    EffectOutbox,
    ExtractionPeer,
    TurnRedactor,
)
from memmesh.errors import DependencyFailed
from memmesh.extraction.commands import CommandMatch, detect_command
from memmesh.extraction.profile import PROFILE_REASON, stated_profile
from memmesh.extraction.text import normalize
from memmesh.outbox import (
    DeadEffect,
    Done,
    Effect,
    EffectRejected,
    Handler,
    PurgeFilter,
    QueuedEffect,
)
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

RECORD_INTERACTION = "record_interaction"
EXTRACT = "extract"
FILL_PROFILE = "fill_profile"
REDACT_TURNS = "redact_turns"
# One lane per peer engine: one engine's outage holds back only the effects bound for it,
# and each engine sees a user's effects in the order the turns came.
STATE_LANE = "current_state"
EXTRACTOR_LANE = "atom_extractor"
THREADS_LANE = "thread_store"
# ThreadStore.RedactTurns takes at most 128 turn ids and 128 terms of 128 characters.
REDACT_BATCH = 128
# How long a forget waits for the first attempt of its archive redaction (then the drainer).
REDACT_FIRST_ATTEMPT_S = 1.0
INTERACTION_REASON = "TURN_INGESTED"
M = TypeVar("M", bound=Message)


def extract_key(turn_id: str) -> str:
    """The outbox key of a turn's extraction."""
    return f"{EXTRACT}:{turn_id}"


def extract_effect(
    scope: scope_pb2.UserScope, turn: memory_pb2.Turn, identity_verified: bool = False
) -> Effect:
    """Extraction of a user turn (the turn as archived text, role and time, and whether its
    speaker is verified: only a verified one teaches the learning capsule)."""
    said = memory_pb2.Turn(
        turn_id=turn.turn_id,
        session_id=turn.session_id,
        role=memory_pb2.ROLE_USER,
        text=turn.text,
        time=turn.time,
    )
    request = extractor_pb.ProcessRequest(
        scope=scope, turn=said, now=turn.time, identity_verified=identity_verified
    )
    return Effect(EXTRACT, request.SerializeToString(), extract_key(turn.turn_id), EXTRACTOR_LANE)


@dataclass(frozen=True)
class SpokenCommand:
    """A privacy command a user turn asks for, as the extractor names it."""

    command: extractor_pb.Command.ValueType
    target: str


def heard_command(turn: memory_pb2.Turn) -> CommandMatch | None:
    """The rules' reading of a user turn's command (None for other roles), read once per
    turn and shared by whatever in the gateway asks."""
    if turn.role != memory_pb2.ROLE_USER:
        return None
    return detect_command(normalize(turn.text))


def spoken_command(turn: memory_pb2.Turn) -> SpokenCommand | None:
    """The privacy command (forget, do not store, do not mention…) a user turn asks for, if
    any: its extraction is what puts the command in force, so the answer waits for it."""
    return spoken_of(heard_command(turn))


def spoken_of(match: CommandMatch | None) -> SpokenCommand | None:
    """spoken_command of a turn whose reading (heard_command) the caller already has."""
    if match is None or match.command is None:
        return None
    return SpokenCommand(
        extractor_pb.Command.Value(f"COMMAND_{match.command.value}"), match.target or ""
    )


def turn_effects(
    scope: scope_pb2.UserScope,
    turn: memory_pb2.Turn,
    identity_verified: bool = False,
    record_interaction: bool = True,
) -> list[Effect]:
    """What follows the archiving of a user turn, in the order it is to happen (none for
    others); the interaction record only when `record_interaction` (interactions.py)."""
    effects: list[Effect] = []
    if turn.role != memory_pb2.ROLE_USER:
        return effects
    if record_interaction:
        effects.append(_interaction_effect(scope, turn))
    effects.append(extract_effect(scope, turn, identity_verified))
    return effects


def _interaction_effect(scope: scope_pb2.UserScope, turn: memory_pb2.Turn) -> Effect:
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
    return Effect(
        RECORD_INTERACTION,
        record.SerializeToString(),
        f"{RECORD_INTERACTION}:{turn.turn_id}",
        STATE_LANE,
    )


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


class ErasingOutbox(EffectOutbox, Protocol):
    """The outbox as a forget and the operator view use it."""

    async def pending(self, tenant_id: str, user_id: str) -> list[QueuedEffect]: ...

    async def dead(self, tenant_id: str, user_id: str) -> list[DeadEffect]: ...

    async def purge(self, tenant_id: str, user_id: str) -> None: ...

    async def purge_matching(self, tenant_id: str, user_id: str, which: PurgeFilter) -> int: ...

    async def tally(self, tenant_id: str, user_id: str) -> list[tuple[str, str, int]]: ...

    async def deliver_queued(
        self,
        tenant_id: str,
        user_id: str,
        timeout_s: float,
        *,
        lanes: Collection[str] | None = None,
        patient: bool = False,
    ) -> int: ...


def _turn_of(effect: QueuedEffect | DeadEffect) -> memory_pb2.Turn | None:
    """The turn a queued extraction carries (None for other kinds or an undecodable one)."""
    if effect.kind != EXTRACT:
        return None
    try:
        return extractor_pb.ProcessRequest.FromString(effect.payload).turn
    except DecodeError:
        return None


def _holds_any(text: str, terms: list[str]) -> bool:
    folded = " ".join(text.split()).casefold()
    return any(" ".join(t.split()).casefold() in folded for t in terms if t.strip())


def forgotten_copies(
    effects: list[QueuedEffect | DeadEffect], erasure: extractor_pb.Erasure, keep: str = ""
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Keys of the queued and dead copies of the forgotten words: the extractions (and the
    profile fills after them) of turns of the forgotten conversation, emptied by the forget,
    or holding a forgotten term. A queued turn that itself carries a command stays: the
    extractor drops its facts and the command still holds (`keep` is the effect being
    delivered, completed by the drainer itself). Also answers the turns dropped for holding
    a term: their archived copy is redacted next (the extractor never saw them)."""
    terms = list(erasure.forget_terms)
    emptied = set(erasure.emptied_turn_ids)
    keys: set[str] = set()
    by_term: set[str] = set()
    for effect in effects:
        turn = _turn_of(effect)
        if turn is None or effect.key == keep:
            continue
        if turn.turn_id in emptied or (
            erasure.session_id and turn.session_id == erasure.session_id
        ):
            pass
        elif not _holds_any(turn.text, terms) or detect_command(normalize(turn.text)).command:
            continue
        else:
            by_term.add(turn.turn_id)
        keys |= {effect.key, f"{FILL_PROFILE}:{turn.turn_id}"}
    return tuple(sorted(keys)), tuple(sorted(by_term))


def redact_effects(
    scope: scope_pb2.UserScope,
    turn_ids: tuple[str, ...],
    terms: list[str],
    now: timestamp_pb2.Timestamp,
) -> list[Effect]:
    """The archive's copies of turns dropped for holding a forgotten term lose those terms."""
    effects = []
    cut = sorted({t[:REDACT_BATCH] for t in terms if t.strip()})[:REDACT_BATCH]
    for start in range(0, len(turn_ids), REDACT_BATCH):
        batch = list(turn_ids[start : start + REDACT_BATCH])
        request = thread_pb.RedactTurnsRequest(
            scope=scope, turn_ids=batch, forget_terms=cut, now=now
        )
        key = f"{REDACT_TURNS}:{batch[0]}:{len(batch)}:{now.seconds}.{now.nanos}"
        effects.append(Effect(REDACT_TURNS, request.SerializeToString(), key, THREADS_LANE))
    return effects


async def drop_forgotten(
    outbox: ErasingOutbox,
    scope: scope_pb2.UserScope,
    erasure: extractor_pb.Erasure,
    now: timestamp_pb2.Timestamp,
    keep: str = "",
) -> int:
    """After a forget, the gateway's own queued and dead copies of the words go (forget
    everything: every effect of the user), and the archived turns dropped for holding a
    forgotten term are redacted through the outbox; how many were dropped."""
    tenant_id, user_id = scope.tenant_id, scope.user_id
    if erasure.everything:
        return await outbox.purge_matching(
            tenant_id, user_id, PurgeFilter(kinds=(RECORD_INTERACTION, EXTRACT, FILL_PROFILE))
        )
    effects: list[QueuedEffect | DeadEffect] = [
        *await outbox.pending(tenant_id, user_id),
        *await outbox.dead(tenant_id, user_id),
    ]
    keys, by_term = forgotten_copies(effects, erasure, keep)
    if not keys:
        return 0
    dropped = await outbox.purge_matching(tenant_id, user_id, PurgeFilter(keys=keys))
    if by_term:
        await outbox.enqueue_and_deliver(
            tenant_id,
            user_id,
            redact_effects(scope, by_term, list(erasure.forget_terms), now),
            REDACT_FIRST_ATTEMPT_S,
        )
    return dropped


async def deliver_queued_extractions(
    outbox: ErasingOutbox, scope: scope_pb2.UserScope, timeout_s: float
) -> None:
    """Deliver the user's queued extractions now, in their order, each allowed the whole
    `timeout_s` (a loaded extractor can take longer than one background attempt's deadline);
    DependencyFailed (UNAVAILABLE, naming the extractor) while one is still queued."""
    if await outbox.deliver_queued(
        scope.tenant_id, scope.user_id, timeout_s, lanes=(EXTRACTOR_LANE,), patient=True
    ):
        raise DependencyFailed(
            "atom_extractor", "UNAVAILABLE", "an earlier turn's extraction is still queued"
        )


def effect_counts(tally: list[tuple[str, str, int]]) -> tuple[list[str], int]:
    """The operator's view of a user's effects: "pending:extract=2", and the dead count."""
    return [f"{state}:{kind}={count}" for state, kind, count in tally], sum(
        count for state, _, count in tally if state == "dead"
    )


class EffectHandlers:
    """Delivery of each effect kind to the peer that owns it."""

    def __init__(
        self,
        state: CurrentStatePeer,
        extractor: ExtractionPeer,
        outbox: Callable[[], ErasingOutbox | None] = lambda: None,
        threads: TurnRedactor | None = None,
    ) -> None:
        self._state = state
        self._extractor = extractor
        self._threads = threads
        # The outbox delivering these handlers (bound after it is built): a spoken forget
        # drops the gateway's own queued copies of the words.
        self._outbox = outbox

    def by_kind(self) -> dict[str, Handler]:
        """The outbox handlers."""
        return {
            RECORD_INTERACTION: self.record_interaction,
            EXTRACT: self.extract,
            FILL_PROFILE: self.fill_profile,
            REDACT_TURNS: self.redact_turns,
        }

    async def redact_turns(self, effect: QueuedEffect, timeout_s: float) -> object:
        """A forgotten term leaves the archived copy of a turn the extractor never saw."""
        if self._threads is None:
            raise EffectRejected("no ThreadStore to redact turns in")
        return await self._threads.redact_turns(
            _decoded(thread_pb.RedactTurnsRequest, effect), timeout_s
        )

    async def record_interaction(self, effect: QueuedEffect, timeout_s: float) -> object:
        return await self._state.apply(_decoded(state_pb.ApplyRequest, effect), timeout_s)

    async def extract(self, effect: QueuedEffect, timeout_s: float) -> object:
        """Extract the turn; the profile fields it states are filled next, as their own effects."""
        request = _decoded(extractor_pb.ProcessRequest, effect)
        processed = await self._extractor.process(request, timeout_s)
        outbox = self._outbox()
        if outbox is not None and processed.HasField("erasure"):
            await drop_forgotten(
                outbox, request.scope, processed.erasure, request.now, keep=effect.key
            )
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
