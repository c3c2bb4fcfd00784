"""The only place that knows both the ThreadStore's proto and domain types."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.engines.thread_store.graph import EDGE_TYPE, NODE_TYPE
from memmesh.engines.thread_store.model import Digest, Edge, GraphNode, Loop, Role, Turn
from memmesh.runtime.timeconv import micros_of, timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb


def turn_of(message: memory_pb2.Turn) -> Turn:
    """A validated request turn (ids, role and time are required by the field rules)."""
    return Turn(message.turn_id, message.session_id, Role(message.role), message.text, micros_of(message.time))


def optional_time(micros: int) -> Timestamp | None:
    """Unset for 0 (never happened)."""
    return timestamp_of(micros) if micros else None


def turn_message(turn: Turn) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn.turn_id, session_id=turn.session_id, role=int(turn.role), text=turn.text,
        time=timestamp_of(turn.time_us),
    )  # fmt: skip


def bundle_turn(turn: Turn) -> bundle_pb2.BundleTurn:
    return bundle_pb2.BundleTurn(
        turn_id=turn.turn_id, session_id=turn.session_id, role=int(turn.role), text=turn.text,
        time=timestamp_of(turn.time_us),
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


def node_message(node: GraphNode) -> pb.GraphNode:
    return pb.GraphNode(node_id=node.node_id, node_type=NODE_TYPE, label=node.label)


def edge_message(edge: Edge) -> pb.GraphEdge:
    return pb.GraphEdge(
        from_node_id=edge.from_node_id, to_node_id=edge.to_node_id, edge_type=EDGE_TYPE, weight=edge.weight
    )
