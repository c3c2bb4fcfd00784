"""The memory graph index (seed 001 §2.19): entities, threads and decisions as nodes;
entity co-occurrence within a turn (mentioned_with), a thread's key entities and its
decisions (mentioned_with, decided_in), and what the user said waits on what (depends_on,
blocked_by). An index, never truth; walks are bounded."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from memmesh.engines.thread_store.domain.model import Digest, Edge, GraphNode
from memmesh.engines.thread_store.domain.text import clip, entities
from memmesh.text import CONVERSATION_STOP_WORDS, entity_node_id, sentences, words

MENTIONED_WITH = "mentioned_with"
DEPENDS_ON = "depends_on"
DECIDED_IN = "decided_in"
BLOCKED_BY = "blocked_by"
NODE_TYPES = frozenset({"entity", "project", "vendor", "decision", "thread"})
DEFAULT_DEPTH = 1
DEFAULT_FAN_OUT = 5
# Whatever depth and fan-out ask for, a walk returns at most this many nodes.
MAX_NODES = 200
DECISION_LABEL_CHARS = 80
THREAD_PREFIX = "thread:"
# A thing waited on is named in at most this many words.
THING_WORDS = 3


@dataclass(frozen=True)
class Link:
    """A typed edge between two nodes, read from its first node: "from depends_on to"."""

    from_node_id: str
    to_node_id: str
    edge_type: str


def node_type(node_id: str) -> str:
    """A node's type is the prefix of its id (entity when it has none of the known ones)."""
    prefix = node_id.split(":", 1)[0]
    return prefix if prefix in NODE_TYPES else "entity"


def turn_nodes(text: str) -> list[GraphNode]:
    """Entity nodes a user turn mentions, in first-seen order."""
    return [GraphNode(entity_node_id(label), label) for label in entities(text)]


def co_occurrences(nodes: Sequence[GraphNode]) -> list[tuple[str, str]]:
    """Both directions of every pair of distinct nodes mentioned together."""
    ids = sorted({node.node_id for node in nodes})
    return [pair for a, b in combinations(ids, 2) for pair in ((a, b), (b, a))]


def thread_node_id(thread_id: str) -> str:
    return f"{THREAD_PREFIX}{thread_id}"


def decision_node(text: str) -> GraphNode:
    """A decision's node: its id from its words, its label the decision clipped."""
    key = hashlib.sha256(" ".join(words(text.lower())).encode()).hexdigest()[:16]
    return GraphNode(f"decision:{key}", clip(text, DECISION_LABEL_CHARS))


def digest_links(
    thread_id: str, digest: Digest, said: Sequence[str]
) -> tuple[list[GraphNode], list[Link]]:
    """What a session adds to the graph of the thread it belongs to: the thread, the
    digest's key entities mentioned in it, its decisions decided in it (and the entities
    each names), and the dependencies the user's turns `said` state. The thread's node has
    no stored label: its title is its sessions' together, read when a walk reaches it (a
    stored one could keep words of a session since forgotten)."""
    thread = GraphNode(thread_node_id(thread_id), "")
    nodes = [thread]
    links: list[Link] = []
    for label in digest.key_entities:
        node = GraphNode(entity_node_id(label), label)
        nodes.append(node)
        links.append(Link(node.node_id, thread.node_id, MENTIONED_WITH))
    for text in digest.last_decisions:
        decision = decision_node(text)
        nodes.append(decision)
        links.append(Link(decision.node_id, thread.node_id, DECIDED_IN))
        for node in turn_nodes(text):
            nodes.append(node)
            links.append(Link(node.node_id, decision.node_id, MENTIONED_WITH))
    for text in said:
        found_nodes, found_links = dependencies(text)
        nodes += found_nodes
        links += found_links
    return list({n.node_id: n for n in nodes}.values()), list(dict.fromkeys(links))


# "<a> depends on <b>", "<a> is blocked by <b>", "can't <a> until <b>", "<a> is waiting on <b>".
_DEPENDENCY_CUES = (
    (re.compile(r"^(?P<a>.+?)\s+(?:depends|depend|relies|rely|hinges)\s+on\s+(?P<b>.+)$", re.I), DEPENDS_ON),
    (re.compile(r"^(?P<a>.+?)\s+(?:is|are|was|were|'s|'re)?\s*(?:blocked|held\s+up|stuck)\s+(?:by|on|because\s+of)\s+(?P<b>.+)$", re.I), BLOCKED_BY),
    (re.compile(r"(?:can'?t|cannot|won'?t|couldn'?t)\s+(?P<a>.+?)\s+(?:until|till|before)\s+(?P<b>.+)$", re.I), BLOCKED_BY),
    (re.compile(r"^(?P<a>.+?)\s+(?:is|are|'s|'re)?\s*(?:still\s+)?waiting\s+(?:on|for)\s+(?P<b>.+)$", re.I), BLOCKED_BY),
)  # fmt: skip
# Words that end the name of a thing waited on ("the permit comes through" -> permit).
_THING_ENDS = frozenset(
    """is are was were be been comes come arrives arrive gets get goes go done finished approved
    signed ready back through in out sorted fixed which that who when because so and or but to
    then first""".split()
)
_LEADS = frozenset("the a an my our your his her their this that these those some".split())


def _thing(phrase: str) -> GraphNode | None:
    """The node a side of a dependency names: its first entity, else the words after its
    first article or possessive (or its first content words) up to a verb or clause word."""
    named = entities(phrase, limit=1)
    if named:
        return GraphNode(entity_node_id(named[0]), named[0])
    tokens = [t.lower() for t in words(phrase)]
    lead = next((i + 1 for i, t in enumerate(tokens) if t in _LEADS), 0)
    kept: list[str] = []
    for token in tokens[lead:]:
        if token in _THING_ENDS or (kept and token in CONVERSATION_STOP_WORDS):
            break
        if token not in CONVERSATION_STOP_WORDS and len(token) >= 3:
            kept.append(token)
        if len(kept) == THING_WORDS:
            break
    if not kept:
        return None
    label = " ".join(kept)
    return GraphNode(entity_node_id(label), label)


def dependencies(text: str) -> tuple[list[GraphNode], list[Link]]:
    """The dependencies the sentences of a text state, as nodes and typed links."""
    nodes: list[GraphNode] = []
    links: list[Link] = []
    for sentence in sentences(text):
        stripped = sentence.strip().rstrip(".!?")
        for pattern, edge_type in _DEPENDENCY_CUES:
            match = pattern.search(stripped)
            if match is None:
                continue
            waiting, awaited = _thing(match.group("a")), _thing(match.group("b"))
            if waiting and awaited and waiting.node_id != awaited.node_id:
                nodes += [waiting, awaited]
                links.append(Link(waiting.node_id, awaited.node_id, edge_type))
            break
    return nodes, links


def strongest(neighbours: Sequence[Edge], fan_out: int, node_id: str) -> list[Edge]:
    """The fan_out heaviest edges at a node, ties broken by the lexicographic id of the
    node each reaches."""
    return sorted(neighbours, key=lambda e: (-e.weight, other_end(e, node_id)))[:fan_out]


def other_end(edge: Edge, node_id: str) -> str:
    """The node an edge reaches from `node_id` (typed edges are walked both ways)."""
    return edge.from_node_id if edge.to_node_id == node_id else edge.to_node_id


def effective_limits(depth: int, fan_out: int) -> tuple[int, int]:
    """Depth and fan-out with 0 meaning the defaults."""
    return depth or DEFAULT_DEPTH, fan_out or DEFAULT_FAN_OUT
