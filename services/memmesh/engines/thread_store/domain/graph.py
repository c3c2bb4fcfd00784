"""The memory graph index (seed 001 §2.19): entity co-occurrence, bounded walks."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from memmesh.engines.thread_store.domain.model import Edge, GraphNode
from memmesh.engines.thread_store.domain.text import entities
from memmesh.text import entity_node_id

EDGE_TYPE = "mentioned_with"
NODE_TYPE = "entity"
DEFAULT_DEPTH = 1
DEFAULT_FAN_OUT = 5
# Whatever depth and fan-out ask for, a walk returns at most this many nodes.
MAX_NODES = 200


def turn_nodes(text: str) -> list[GraphNode]:
    """Entity nodes a user turn mentions, in first-seen order."""
    return [GraphNode(entity_node_id(label), label) for label in entities(text)]


def co_occurrences(nodes: Sequence[GraphNode]) -> list[tuple[str, str]]:
    """Both directions of every pair of distinct nodes mentioned together."""
    ids = sorted({node.node_id for node in nodes})
    return [pair for a, b in combinations(ids, 2) for pair in ((a, b), (b, a))]


def strongest(neighbours: Sequence[Edge], fan_out: int) -> list[Edge]:
    """The fan_out heaviest edges, ties broken by the lexicographic node id."""
    return sorted(neighbours, key=lambda e: (-e.weight, e.to_node_id))[:fan_out]


def effective_limits(depth: int, fan_out: int) -> tuple[int, int]:
    """Depth and fan-out with 0 meaning the defaults."""
    return depth or DEFAULT_DEPTH, fan_out or DEFAULT_FAN_OUT
