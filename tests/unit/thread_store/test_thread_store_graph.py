"""The graph's typed links (seed 001 §2.19): what a session says about its thread, and what
waits on what."""

from __future__ import annotations

import pytest

from memmesh.engines.thread_store.domain.graph import (
    BLOCKED_BY,
    DECIDED_IN,
    DEPENDS_ON,
    MENTIONED_WITH,
    decision_node,
    dependencies,
    digest_links,
    node_type,
)
from memmesh.engines.thread_store.domain.model import Digest


@pytest.mark.parametrize(
    ("said", "link"),
    [
        (
            "We can't start the tiling until the permit comes through.",
            ("entity:tiling", "entity:permit", BLOCKED_BY),
        ),
        (
            "The countertop depends on the cabinets.",
            ("entity:countertop", "entity:cabinets", DEPENDS_ON),
        ),
        (
            "The move is blocked by the lease renewal.",
            ("entity:move", "entity:lease-renewal", BLOCKED_BY),
        ),
        (
            "Honestly the launch is still waiting on Legal.",
            ("entity:launch", "entity:legal", BLOCKED_BY),
        ),
    ],
)
def test_what_waits_on_what(said: str, link: tuple[str, str, str]) -> None:
    _, links = dependencies(said)
    assert [(x.from_node_id, x.to_node_id, x.edge_type) for x in links] == [link]


@pytest.mark.parametrize(
    "said",
    [
        "I can't wait!",
        "We waited for ages at the airport.",
        "It depends.",
        "The tiling is done.",
    ],
)
def test_no_dependency_without_both_sides(said: str) -> None:
    assert dependencies(said) == ([], [])


def test_a_session_links_its_entities_and_decisions_to_its_thread() -> None:
    digest = Digest(
        "s2",
        "Marco",
        "Marco measured.",
        ("Marco",),
        (),
        "",
        (),
        0,
        last_decisions=("We'll go with oak from Nordwood.",),
    )
    nodes, links = digest_links("s1", digest, ["The tiles depend on the floor."])
    labels = {node.node_id: node.label for node in nodes}
    decision = decision_node("We'll go with oak from Nordwood.").node_id
    assert labels["thread:s1"] == "" and node_type(decision) == "decision"
    assert {(x.from_node_id, x.to_node_id, x.edge_type) for x in links} == {
        ("entity:marco", "thread:s1", MENTIONED_WITH),
        (decision, "thread:s1", DECIDED_IN),
        ("entity:nordwood", decision, MENTIONED_WITH),
        ("entity:tiles", "entity:floor", DEPENDS_ON),
    }
    # The same decision said again is the same node.
    assert decision_node("we'll  go with oak from Nordwood").node_id == decision
