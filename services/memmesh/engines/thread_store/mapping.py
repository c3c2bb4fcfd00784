"""The only place that knows both the ThreadStore's proto and domain types."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.engines.thread_store.domain.graph import EDGE_TYPE, NODE_TYPE
from memmesh.engines.thread_store.domain.model import (
    Digest,
    Edge,
    Episode,
    GraphNode,
    Loop,
    Resumed,
    Role,
    Turn,
    TurnContext,
    WorkingMemory,
)
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.timeconv import micros_of, timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb


def turn_of(message: memory_pb2.Turn) -> Turn:
    """A validated request turn (ids, role and time are required by the field rules); an
    unset exposure is the loosest, so the classification of the text alone decides it."""
    exposure = Exposure(message.exposure) if message.exposure else Exposure.SAFE_TO_SPEAK
    return Turn(message.turn_id, message.session_id, Role(message.role), message.text, micros_of(message.time), exposure)


def optional_time(micros: int) -> Timestamp | None:
    """Unset for 0 (never happened)."""
    return timestamp_of(micros) if micros else None


def turn_message(turn: Turn) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn.turn_id, session_id=turn.session_id, role=int(turn.role), text=turn.text,
        time=timestamp_of(turn.time_us), exposure=int(turn.exposure),
    )  # fmt: skip


def bundle_turn(turn: Turn) -> bundle_pb2.BundleTurn:
    return bundle_pb2.BundleTurn(
        turn_id=turn.turn_id, session_id=turn.session_id, role=int(turn.role), text=turn.text,
        time=timestamp_of(turn.time_us), exposure=int(turn.exposure),
    )  # fmt: skip


def loop_message(loop: Loop) -> bundle_pb2.ActiveLoop:
    return bundle_pb2.ActiveLoop(
        loop_id=loop.loop_id, loop_type="commitment", text=loop.text, salience=loop.salience,
        open_time=timestamp_of(loop.open_us), source_turn_id=loop.source_turn_id,
    )  # fmt: skip


def digest_message(digest: Digest | None) -> pb.Digest:
    """The digest as the API returns it (an empty message for None)."""
    if digest is None:
        return pb.Digest()
    return pb.Digest(
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
    )


def episode_message(episode: Episode) -> pb.Digest:
    """An episode digest as the API returns it: a Digest naming its thread and its episode id."""
    return pb.Digest(
        thread_id=episode.thread_id,
        episode_id=episode.episode_id,
        title=episode.title,
        summary=episode.summary,
        key_entities=episode.key_entities,
        evidence_turn_ids=episode.evidence_turn_ids,
        update_time=optional_time(episode.update_us),
    )


def node_message(node: GraphNode) -> pb.GraphNode:
    return pb.GraphNode(node_id=node.node_id, node_type=NODE_TYPE, label=node.label)


def edge_message(edge: Edge) -> pb.GraphEdge:
    return pb.GraphEdge(
        from_node_id=edge.from_node_id, to_node_id=edge.to_node_id, edge_type=EDGE_TYPE, weight=edge.weight
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
    )


def turn_context_response(context: TurnContext) -> pb.GetTurnContextResponse:
    return pb.GetTurnContextResponse(
        mode=int(context.mode),
        working_memory=working_memory_response(context.memory),
        resume=resume_response(context.resumed) if context.resumed is not None else None,
        resume_unavailable=context.resume_unavailable,
    )
