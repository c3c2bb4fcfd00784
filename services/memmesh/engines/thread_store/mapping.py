"""The only place that knows both the ThreadStore's proto and domain types."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.engines.thread_store.domain.graph import node_type
from memmesh.engines.thread_store.domain.model import (
    Appended,
    ClosedSession,
    Digest,
    Edge,
    Episode,
    Expansion,
    GraphNode,
    Loop,
    Mode,
    Resumed,
    Role,
    Turn,
    TurnContext,
    WorkingMemory,
)
from memmesh.observation import Provenance
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.timeconv import micros_of, timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb


def turn_of(message: memory_pb2.Turn) -> Turn:
    """A validated request turn (ids, role and time are required by the field rules); an
    unset exposure is the loosest, so the classification of the text alone decides it."""
    exposure = Exposure(message.exposure) if message.exposure else Exposure.SAFE_TO_SPEAK
    return Turn(
        message.turn_id,
        message.session_id,
        Role(message.role),
        message.text,
        micros_of(message.time),
        exposure,
    )


def mode_of(value: int) -> Mode | None:
    """A requested session mode; None (decide it) when unset."""
    return Mode(value) if value else None


def mode_value(mode: Mode) -> bundle_pb2.SessionMode.ValueType:
    return bundle_pb2.SessionMode.ValueType(mode)


def exposure_of(value: int) -> Exposure:
    return Exposure(value)


def _role_value(role: Role) -> memory_pb2.Role.ValueType:
    return memory_pb2.Role.ValueType(role)


def _exposure_value(exposure: Exposure) -> memory_pb2.Exposure.ValueType:
    return memory_pb2.Exposure.ValueType(exposure)


def optional_time(micros: int) -> Timestamp | None:
    """Unset for 0 (never happened)."""
    return timestamp_of(micros) if micros else None


def turn_message(turn: Turn) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn.turn_id, session_id=turn.session_id, role=_role_value(turn.role), text=turn.text,
        time=timestamp_of(turn.time_us), exposure=_exposure_value(turn.exposure),
    )  # fmt: skip


def bundle_turn(turn: Turn) -> bundle_pb2.BundleTurn:
    return bundle_pb2.BundleTurn(
        turn_id=turn.turn_id, session_id=turn.session_id, role=_role_value(turn.role), text=turn.text,
        time=timestamp_of(turn.time_us), exposure=_exposure_value(turn.exposure),
    )  # fmt: skip


def loop_message(loop: Loop) -> bundle_pb2.ActiveLoop:
    return bundle_pb2.ActiveLoop(
        loop_id=loop.loop_id, loop_type="commitment", text=loop.text, salience=loop.salience,
        open_time=timestamp_of(loop.open_us), source_turn_id=loop.source_turn_id,
    )  # fmt: skip


def digest_message(digest: Digest | None) -> memory_pb2.Digest:
    """The digest as the API returns it (an empty message for None)."""
    if digest is None:
        return memory_pb2.Digest()
    return memory_pb2.Digest(
        thread_id=digest.thread_id,
        title=digest.title,
        summary=digest.summary,
        key_entities=digest.key_entities,
        unresolved_questions=digest.unresolved_questions,
        next_step=digest.next_step,
        evidence_turn_ids=digest.evidence_turn_ids,
        update_time=optional_time(digest.update_us),
        pinned=digest.pinned,
        use_count=digest.use_count,
        last_use_time=optional_time(digest.last_use_us),
        unresolved=digest.unresolved,
        last_decisions=digest.last_decisions,
        session_ids=digest.session_ids,
        summary_provenance=provenance_message(digest.summary_provenance),
    )


def provenance_message(provenance: Provenance | None) -> memory_pb2.SummaryProvenance | None:
    if provenance is None:
        return None
    return memory_pb2.SummaryProvenance(
        provider=provenance.provider,
        model=provenance.model,
        prompt_version=provenance.prompt_version,
        input_hash=provenance.input_hash,
        output_hash=provenance.output_hash,
        latency_ms=provenance.latency_ms,
        attempt_count=provenance.attempt_count,
        fallback_used=provenance.fallback_used,
        fallback_reason=provenance.fallback_reason,
    )


def episode_message(episode: Episode) -> memory_pb2.Digest:
    """An episode digest as the API returns it: a Digest naming its thread and its episode id."""
    return memory_pb2.Digest(
        thread_id=episode.thread_id,
        episode_id=episode.episode_id,
        title=episode.title,
        summary=episode.summary,
        key_entities=episode.key_entities,
        evidence_turn_ids=episode.evidence_turn_ids,
        update_time=optional_time(episode.update_us),
    )


def node_message(node: GraphNode) -> pb.GraphNode:
    return pb.GraphNode(node_id=node.node_id, node_type=node_type(node.node_id), label=node.label)


def edge_message(edge: Edge) -> pb.GraphEdge:
    return pb.GraphEdge(
        from_node_id=edge.from_node_id,
        to_node_id=edge.to_node_id,
        edge_type=edge.edge_type,
        weight=edge.weight,
    )


def working_memory_response(memory: WorkingMemory) -> pb.GetWorkingMemoryResponse:
    return pb.GetWorkingMemoryResponse(
        turns=[bundle_turn(t) for t in memory.turns],
        rolling_summary=memory.rolling_summary,
        active_loops=[loop_message(loop) for loop in memory.active_loops],
        last_interaction_time=optional_time(memory.last_interaction_us),
    )


def resume_response(resumed: Resumed) -> pb.ResumeResponse:
    return pb.ResumeResponse(
        episode_bridge=resumed.episode_bridge,
        candidates=[digest_message(d) for d in resumed.candidates],
        tier=resumed.tier,
        left_off=resumed.left_off,
    )


def turn_context_response(context: TurnContext) -> pb.GetTurnContextResponse:
    return pb.GetTurnContextResponse(
        mode=mode_value(context.mode),
        working_memory=working_memory_response(context.memory),
        resume=resume_response(context.resumed) if context.resumed is not None else None,
        resume_unavailable=context.resume_unavailable,
        entities=expand_response(context.entities) if context.entities is not None else None,
        entities_unavailable=context.entities_unavailable,
        learned_tone=context.tone,
    )


def append_turn_response(appended: Appended) -> pb.AppendTurnResponse:
    return pb.AppendTurnResponse(
        mode=mode_value(appended.mode),
        duplicate=appended.duplicate,
        loops_changed=[
            loop_message(loop) for loop in (*appended.loops_closed, *appended.loops_opened)
        ],
        loops_opened=[loop_message(loop) for loop in appended.loops_opened],
        loops_closed=[loop_message(loop) for loop in appended.loops_closed],
        exposure=_exposure_value(appended.exposure),
    )


def close_session_response(closed: ClosedSession | None) -> pb.CloseSessionResponse:
    """The digest and episodes of a closed session; an empty response for an unknown one."""
    if closed is None:
        return pb.CloseSessionResponse(digest=digest_message(None))
    return pb.CloseSessionResponse(
        digest=digest_message(closed.digest), episodes=[episode_message(e) for e in closed.episodes]
    )


def expand_response(expansion: Expansion) -> pb.ExpandResponse:
    return pb.ExpandResponse(
        nodes=[node_message(n) for n in expansion.nodes],
        edges=[edge_message(e) for e in expansion.edges],
    )
