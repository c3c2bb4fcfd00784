"""The only module that knows both the composer's proto messages and its domain types."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Protocol, TypeVar, cast

from google.protobuf.descriptor import EnumDescriptor
from google.protobuf.duration_pb2 import Duration

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.context_composer.v1 import context_composer_service_pb2 as pb
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.engines.context_composer.domain.model import (
    Bundle,
    Composed,
    ComposeQuery,
    CorrectionPair,
    Digest,
    Entity,
    GuardVerdict,
    Loop,
    MemoryAtom,
    PendingWork,
    ResumeCandidate,
    Retrieved,
    SessionContext,
    SessionMemory,
    TurnRecord,
    UserFacts,
)
from memmesh.engines.context_composer.domain.text import mentions
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.runtime.timeconv import micros_of, timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb


class _Described(Protocol):
    """A generated enum wrapper, as far as reading its descriptor goes."""

    @property
    def DESCRIPTOR(self) -> EnumDescriptor: ...  # noqa: N802 (the protobuf API's name)


@cache
def _names(enum: EnumDescriptor, prefix: str) -> dict[int, str]:
    """An enum's value names without their prefix, by number (read once per enum)."""
    return {value.number: value.name.removeprefix(prefix) for value in enum.values}


def _name(enum: _Described, number: int, prefix: str) -> str:
    name = _names(enum.DESCRIPTOR, prefix).get(number)
    # A number the descriptor does not know raises, as enum.Name does.
    return name if name is not None else str(enum.Name(number)).removeprefix(prefix)  # type: ignore[attr-defined]


V = TypeVar("V", bound=int, covariant=True)


class _EnumValues(_Described, Protocol[V]):
    """A generated enum wrapper, as far as looking values up by name goes."""

    def Value(self, name: str) -> V: ...  # noqa: N802 (the protobuf API's name)


@cache
def _numbers(enum: EnumDescriptor, prefix: str) -> dict[str, int]:
    """An enum's numbers by value name without its prefix (read once per enum)."""
    values = enum.values
    return {
        value.name.removeprefix(prefix): value.number
        for value in values
        if value.name.startswith(prefix)
    }


def _number(enum: _EnumValues[V], name: str, prefix: str) -> V:
    number = _numbers(enum.DESCRIPTOR, prefix).get(name)
    # A name the descriptor does not know raises, as enum.Value does.
    return cast(V, number) if number is not None else enum.Value(prefix + name)


def _micros(message: object, field: str) -> int:
    # An unset Timestamp reads as the epoch: 0, as for a time never recorded.
    return micros_of(getattr(message, field))


def compose_query(request: pb.ComposeRequest) -> ComposeQuery:
    """The domain query of a Compose request."""
    return ComposeQuery(
        tenant_id=request.scope.tenant_id,
        user_id=request.scope.user_id,
        session_id=request.session_id,
        now_us=micros_of(request.now),
        mode=_name(bundle_pb2.SessionMode, request.mode, "SESSION_MODE_"),
        query=request.query,
        channel=_name(memory_pb2.Channel, request.channel, "CHANNEL_"),
        unanswered_question_ids=frozenset(request.unanswered_question_ids),
        user_review_requested=request.user_review_requested,
        device_restored=request.device_restored,
        resume_thread_id=request.resume_thread_id,
    )


def atom_of(atom: memory_pb2.Atom) -> MemoryAtom:
    """A ranked atom in domain terms."""
    return MemoryAtom(
        atom_id=atom.atom_id,
        key=atom.key,
        text=atom.text,
        category=_name(memory_pb2.AtomCategory, atom.category, "ATOM_CATEGORY_"),
        type=_name(memory_pb2.AtomType, atom.type, "ATOM_TYPE_"),
        provenance=_name(memory_pb2.Provenance, atom.provenance, "PROVENANCE_"),
        confidence_bp=atom.confidence_bp,
        exposure=_name(memory_pb2.Exposure, atom.exposure, "EXPOSURE_"),
        pinned=atom.pinned,
        pull_only=atom.pull_only,
        critical_tokens=tuple(atom.critical_tokens),
        create_us=_micros(atom, "create_time"),
        confirm_us=_micros(atom, "confirm_time"),
        last_use_us=_micros(atom, "last_use_time"),
        use_count=atom.use_count,
        evidence_turn_ids=tuple(atom.evidence_turn_ids),
        status=_name(memory_pb2.AtomStatus, atom.status, "ATOM_STATUS_"),
        topics=tuple(atom.topics),
    )


def _turn_of(candidate: ranker_pb.Candidate) -> TurnRecord:
    if candidate.document.HasField("turn"):
        turn = candidate.document.turn
        return TurnRecord(
            turn_id=turn.turn_id or candidate.doc_id,
            session_id=turn.session_id,
            role=_name(memory_pb2.Role, turn.role, "ROLE_"),
            text=turn.text,
            time_us=_micros(turn, "time"),
            exposure=_name(memory_pb2.Exposure, turn.exposure, "EXPOSURE_"),
        )
    # Without its turn the exposure is unknown: UNSPECIFIED, which the guard never lets pass.
    return TurnRecord(candidate.doc_id, "", "USER", "", 0, "UNSPECIFIED")


def _digest_of(candidate: ranker_pb.Candidate) -> Digest:
    """A thread or episode digest, under its index id; its key entities follow its summary,
    those its title or summary already names left out (each would be bundle bytes again)."""
    digest = candidate.document.digest
    unnamed = [
        e
        for e in digest.key_entities
        if not mentions(digest.title, e) and not mentions(digest.summary, e)
    ]
    summary = " ".join(part for part in (digest.summary, *unnamed) if part)
    doc_id = candidate.doc_id or digest.episode_id or digest.thread_id
    return Digest(
        doc_id,
        digest.title,
        summary,
        tuple(digest.evidence_turn_ids),
        digest.thread_id or doc_id,
        _micros(digest, "update_time"),
    )


def retrieved_of(response: ranker_pb.RetrieveResponse) -> Retrieved:
    """Ranker candidates in domain terms, in the ranker's order."""
    return Retrieved(
        atoms=tuple(
            atom_of(c.document.atom) for c in response.atoms if c.document.HasField("atom")
        ),
        turns=tuple(_turn_of(c) for c in response.turns),
        digests=tuple(_digest_of(c) for c in response.digests if c.document.HasField("digest")),
        standing=tuple(
            atom_of(c.document.atom)._replace(standing=True)
            for c in response.standing_constraints
            if c.document.HasField("atom")
        ),
    )


def _bundle_turn_of(turn: bundle_pb2.BundleTurn) -> TurnRecord:
    role, exposure = (
        _name(memory_pb2.Role, turn.role, "ROLE_"),
        _name(memory_pb2.Exposure, turn.exposure, "EXPOSURE_"),
    )
    return TurnRecord(
        turn.turn_id, turn.session_id, role, turn.text, _micros(turn, "time"), exposure
    )


def session_of(response: thread_pb.GetWorkingMemoryResponse) -> SessionMemory:
    """Working memory in domain terms."""
    return SessionMemory(
        turns=tuple(_bundle_turn_of(t) for t in response.turns),
        rolling_summary=response.rolling_summary,
        loops=tuple(
            Loop(
                lp.loop_id,
                lp.loop_type,
                lp.text,
                lp.salience,
                _micros(lp, "open_time"),
                lp.source_turn_id,
            )
            for lp in response.active_loops
        ),
        last_interaction_us=_micros(response, "last_interaction_time"),
    )


def resume_of(response: thread_pb.ResumeResponse) -> ResumeCandidate:
    """The resume candidate in domain terms."""
    top = response.candidates[0] if response.candidates else None
    return ResumeCandidate(
        response.episode_bridge,
        response.tier,
        top.thread_id if top is not None else "",
        top.title if top is not None else "",
        tuple(response.left_off),
        max(_micros(top, "update_time"), _micros(top, "last_use_time")) if top is not None else 0,
    )


def session_context_of(response: thread_pb.GetTurnContextResponse) -> SessionContext:
    """The turn context in domain terms; a session start without its resume part gets None,
    and so do the entities when their part failed."""
    mode = _name(bundle_pb2.SessionMode, response.mode, "SESSION_MODE_")
    resume = (
        resume_of(response.resume)
        if response.HasField("resume") and not response.resume_unavailable
        else None
    )
    entities = None if response.entities_unavailable else entities_of(response.entities)
    return SessionContext(
        mode,
        session_of(response.working_memory),
        resume,
        entities,
        tuple(response.learned_tone),
    )


def entities_of(response: thread_pb.ExpandResponse) -> tuple[Entity, ...]:
    """Every edge walked, as the entity it reaches from the one it starts at."""
    labels = {node.node_id: node.label for node in response.nodes}
    return tuple(
        Entity(
            edge.to_node_id,
            labels.get(edge.to_node_id, ""),
            edge.from_node_id,
            labels.get(edge.from_node_id, ""),
            edge.weight,
        )
        for edge in response.edges
        if labels.get(edge.to_node_id)
    )


def pending_work_of(order: state_pb.WorkOrder) -> PendingWork:
    """A pending work order as the composer offers it."""
    return PendingWork(
        order.work_order_id,
        order.title,
        order.pending_question,
        _micros(order, "update_time"),
    )


def facts_of(state: state_pb.UserState) -> UserFacts:
    """The Current State facts the composer uses."""
    contact = state.profile.contact_preference
    return UserFacts(
        display_name=state.profile.display_name,
        primary_language=state.profile.primary_language,
        contact_preference=""
        if contact == 0
        else _name(state_pb.ContactPreference, contact, "CONTACT_PREFERENCE_"),
        timezone=state.profile.timezone,
        auto_resume_disabled=state.resume_preferences.auto_resume_disabled,
        recall_only_when_asked=state.resume_preferences.recall_only_when_asked,
        remember_everything=state.memory_retention_mode
        == state_pb.RETENTION_MODE_REMEMBER_EVERYTHING,
        last_interaction_us=_micros(state, "last_interaction_time"),
    )


def verdict_of(response: guard_pb.FilterResponse) -> GuardVerdict:
    """The guard's verdict in domain terms."""
    return GuardVerdict(
        frozenset(response.allowed_item_ids),
        response.do_not_mention_hits,
        frozenset(response.do_not_say_item_ids),
    )


def mode_number(mode: str) -> bundle_pb2.SessionMode.ValueType:
    """The SessionMode enum value of a domain mode ("UNSPECIFIED" lets the callee decide)."""
    return _number(bundle_pb2.SessionMode, mode or "UNSPECIFIED", "SESSION_MODE_")


def channel_number(channel: str) -> memory_pb2.Channel.ValueType:
    """The Channel enum value of a domain channel name."""
    return _number(memory_pb2.Channel, channel, "CHANNEL_")


def _digest_message(digest: Digest) -> bundle_pb2.BundleDigest:
    message = bundle_pb2.BundleDigest(
        digest_id=digest.digest_id,
        title=digest.title,
        summary=digest.summary,
        evidence_turn_ids=list(digest.evidence_turn_ids),
        thread_id=digest.thread_id or digest.digest_id,
    )
    if digest.time_us:
        message.time.CopyFrom(timestamp_of(digest.time_us))
    return message


def _turn_message(turn: TurnRecord) -> bundle_pb2.BundleTurn:
    message = bundle_pb2.BundleTurn(
        turn_id=turn.turn_id,
        session_id=turn.session_id,
        role=_number(memory_pb2.Role, turn.role or "UNSPECIFIED", "ROLE_"),
        text=turn.text,
        exposure=_number(memory_pb2.Exposure, turn.exposure or "UNSPECIFIED", "EXPOSURE_"),
        do_not_say=turn.do_not_say,
    )
    if turn.time_us:
        message.time.CopyFrom(timestamp_of(turn.time_us))
    return message


def bundle_message(bundle: Bundle) -> bundle_pb2.ContextBundle:
    """The ContextBundle message of a domain bundle."""
    push = bundle.push
    message = bundle_pb2.ContextBundle(
        push=bundle_pb2.PushMemory(
            display_name=push.display_name,
            primary_language=push.primary_language,
            contact_preference=push.contact_preference,
            timezone=push.timezone,
            active_project_ids=list(push.active_project_ids),
            do_not_repeat_keys=list(push.do_not_repeat_keys),
        ),
        working_memory=[_turn_message(t) for t in bundle.working_memory],
        rolling_summary=bundle.rolling_summary,
        active_loops=[
            bundle_pb2.ActiveLoop(
                loop_id=lp.loop_id,
                loop_type=lp.loop_type,
                text=lp.text,
                salience=lp.salience,
                open_time=timestamp_of(lp.open_us) if lp.open_us else None,
                source_turn_id=lp.source_turn_id,
            )
            for lp in bundle.loops
        ],
        atoms=[
            bundle_pb2.BundleAtom(
                atom_id=t.atom.atom_id,
                key=t.atom.key,
                text=t.atom.text,
                category=_number(
                    memory_pb2.AtomCategory, t.atom.category or "UNSPECIFIED", "ATOM_CATEGORY_"
                ),
                tag=_number(memory_pb2.MemoryTag, t.tag, "MEMORY_TAG_"),
                exposure=_number(
                    memory_pb2.Exposure, t.atom.exposure or "UNSPECIFIED", "EXPOSURE_"
                ),
                confidence_bp=t.atom.confidence_bp,
                evidence_turn_ids=list(t.atom.evidence_turn_ids),
                do_not_say=t.do_not_say,
                standing_constraint=t.atom.standing,
            )
            for t in bundle.atoms
        ],
        excerpts=[_turn_message(t) for t in bundle.excerpts],
        digests=[_digest_message(d) for d in bundle.digests],
        episode_bridge=bundle.episode_bridge,
        mode=_number(bundle_pb2.SessionMode, bundle.mode or "UNSPECIFIED", "SESSION_MODE_"),
        entities=[
            bundle_pb2.BundleEntity(
                node_id=e.node_id,
                label=e.label,
                related_node_id=e.related_node_id,
                related_label=e.related_label,
                weight=e.weight,
            )
            for e in bundle.entities
        ],
    )
    message.temporal.now.CopyFrom(timestamp_of(bundle.now_us))
    if bundle.last_interaction_us:
        message.temporal.last_interaction_time.CopyFrom(timestamp_of(bundle.last_interaction_us))
        since = max(bundle.now_us - bundle.last_interaction_us, 0)
        message.temporal.time_since_last_interaction.CopyFrom(
            Duration(seconds=since // 1_000_000, nanos=(since % 1_000_000) * 1000)
        )
    if bundle.question is not None:
        q = bundle.question
        message.clarification.CopyFrom(
            bundle_pb2.ClarificationQuestion(
                question_id=q.question_id,
                atom_id=q.atom_id,
                key=q.key,
                text=q.text,
                reason_code=q.reason_code,
            )
        )
    return message


def bundle_size(bundle: Bundle) -> int:
    """Serialized size of the bundle in bytes (what the 32 KB cap measures)."""
    return bundle_message(bundle).ByteSize()


class BundleEncoder:
    """Measures a bundle by encoding it and keeps that encoding, so the response reuses the
    message the 32 KB cap was checked on: one encoding per turn instead of two."""

    def __init__(self) -> None:
        self._last: tuple[Bundle, bundle_pb2.ContextBundle] | None = None

    def __call__(self, bundle: Bundle) -> int:
        message = bundle_message(bundle)
        self._last = (bundle, message)
        return message.ByteSize()

    def message(self, bundle: Bundle) -> bundle_pb2.ContextBundle:
        """The message of `bundle`: the one just measured when it is that very bundle."""
        last, self._last = self._last, None
        return last[1] if last is not None and last[0] is bundle else bundle_message(bundle)


def compose_response(
    composed: Composed, encoder: BundleEncoder | None = None
) -> pb.ComposeResponse:
    """The Compose response of a composition (its bundle encoded once when `encoder` measured it)."""
    hints, counters = composed.hints, composed.counters
    return pb.ComposeResponse(
        bundle=encoder.message(composed.bundle)
        if encoder is not None
        else bundle_message(composed.bundle),
        hints=bundle_pb2.HintBundle(
            language=hints.language,
            vocabulary=list(hints.vocabulary),
            corrections=[
                bundle_pb2.CorrectionPair(heard=c.heard, meant=c.meant) for c in hints.corrections
            ],
        ),
        tone=bundle_pb2.ToneGuidance(
            labels=list(composed.tone_labels), learned=list(composed.learned_tone)
        ),
        counters=bundle_pb2.BundleCounters(
            context_bundle_bytes=counters.context_bundle_bytes,
            atoms_selected_count=counters.atoms_selected_count,
            excerpts_selected_count=counters.excerpts_selected_count,
            confirmed_count=counters.confirmed_count,
            tentative_count=counters.tentative_count,
            conflict_trigger_count=counters.conflict_trigger_count,
            clarification_due_to_memory_count=counters.clarification_due_to_memory_count,
            do_not_mention_hits_count=counters.do_not_mention_hits_count,
        ),
        degraded_parts=list(composed.degraded_parts),
        user_asked=composed.user_asked,
        speak_text_allowed=composed.speak_text_allowed,
        offered_work_order_id=composed.offered_work_order_id,
    )


def corrections_of(pairs: Sequence[object]) -> tuple[CorrectionPair, ...]:
    """Correction pairs (any message with heard and meant) in domain terms."""
    return tuple(CorrectionPair(p.heard, p.meant) for p in pairs)  # type: ignore[attr-defined]
