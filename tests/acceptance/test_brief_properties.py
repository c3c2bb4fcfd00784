"""Properties of Brief over random stores and queries, through the gateway over real engine
processes: the caps are never exceeded, the same request on the same state gives the same
bytes, and no INTERNAL_ONLY, DO_NOT_MENTION or (unasked) pull-only item ever leaves.

Each example is a fresh user: atoms are seeded into the RetrievalRanker's index with random
signals, exposures and pull-only flags (see acceptance_mesh), archive turns are ingested and
DO_NOT_MENTION rules are set with the gateway's Command.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from acceptance_mesh import (
    DAY_US,
    MINUTE_US,
    NOW_US,
    TENANT,
    TENANT_KEY,
    User,
    check_caps,
    response_text,
    running_mesh,
    seeded_atom,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import memory_pb2
from memmesh.runtime.supervisor import Mesh

TOPICS = ("garden", "violin", "kayak", "sushi")
EXPOSURES = (
    memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
    memory_pb2.EXPOSURE_SAFE_TO_TEXT,
    memory_pb2.EXPOSURE_INTERNAL_ONLY,
)
PROVENANCES = (
    memory_pb2.PROVENANCE_VERIFIED,
    memory_pb2.PROVENANCE_USER_STATED,
    memory_pb2.PROVENANCE_TOOL_DERIVED,
    memory_pb2.PROVENANCE_INFERRED,
)
FILLER = " It came up again over dinner with friends, in some detail." * 60


@dataclass(frozen=True)
class AtomSpec:
    topic: str
    exposure: int
    pinned: bool
    pull_only: bool
    provenance: int
    confidence_bp: int
    age_days: int
    last_use_days: int | None
    use_count: int
    long_text: bool
    conflict: bool


atom_specs = st.builds(
    AtomSpec,
    topic=st.sampled_from(TOPICS),
    # Weighted toward items that may pass, so that bundles fill up and the caps bite.
    exposure=st.sampled_from(EXPOSURES[:1] * 4 + EXPOSURES),
    pinned=st.booleans(),
    pull_only=st.sampled_from((False, False, False, True)),
    provenance=st.sampled_from(PROVENANCES),
    confidence_bp=st.integers(3000, 10000),
    age_days=st.integers(0, 60),
    last_use_days=st.none() | st.integers(0, 60),
    use_count=st.integers(0, 20),
    long_text=st.booleans(),
    conflict=st.sampled_from((False, False, False, True)),
)
# Sizes drawn uniformly: plain lists stay short, and the caps need stores past 20 atoms.
stores = st.integers(1, 45).flatmap(lambda size: st.lists(atom_specs, min_size=size, max_size=size))
queries = st.lists(st.sampled_from((*TOPICS, "weather", "remember")), min_size=1, max_size=3)


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "brief-properties")


def atom_of(user: User, index: int, spec: AtomSpec) -> memory_pb2.Atom:
    """A random atom; its text carries a marker unique to it, so a leak is visible anywhere."""
    marker = f"mk{index}z{user.user_id[-6:]}"
    return seeded_atom(
        f"atm_{user.user_id[-12:]}_{index:02d}",
        f"preference.{spec.topic}.n{index}",
        f"User's {spec.topic} note {marker}.{FILLER if spec.long_text else ''}",
        created_us=NOW_US - spec.age_days * DAY_US,
        confidence_bp=spec.confidence_bp,
        provenance=spec.provenance,
        exposure=spec.exposure,
        pinned=spec.pinned,
        pull_only=spec.pull_only,
        last_use_us=NOW_US - spec.last_use_days * DAY_US if spec.last_use_days is not None else 0,
        use_count=spec.use_count,
        topics=(spec.topic,),
        status=memory_pb2.ATOM_STATUS_CONFLICT if spec.conflict else memory_pb2.ATOM_STATUS_ACTIVE,
    )


def mentions(text: str, word: str) -> bool:
    return re.search(rf"\b{word}\b", text, re.IGNORECASE) is not None


async def check_example(
    mesh: Mesh,
    specs: list[AtomSpec],
    archive: list[str],
    hidden_topics: list[str],
    words: list[str],
    channel: str,
) -> None:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        user = User(mesh, gateway)
        atoms = [atom_of(user, index, spec) for index, spec in enumerate(specs)]
        if atoms:
            await user.seed_atoms(atoms)
        for n, topic in enumerate(archive):
            await user.say(
                f"Today I thought about {topic} again.", NOW_US - DAY_US + n * MINUTE_US, "s0"
            )
        for topic in hidden_topics:
            await gateway.command(
                user.user_id, "s0", "DO_NOT_MENTION", NOW_US - MINUTE_US, target=topic
            )
        query = " ".join(words) + "?"
        options = {"channel": channel, "mode": "in_session"}
        first = await user.brief(query, NOW_US, "p1", **options)
        second = await user.brief(query, NOW_US, "p1", **options)

        for response in (first, second):
            check_caps(response)
            text = response_text(response)
            for atom, spec in zip(atoms, specs, strict=True):
                marker = atom.text.split(" ")[3].rstrip(".")
                forbidden = (
                    spec.exposure == memory_pb2.EXPOSURE_INTERNAL_ONLY
                    or spec.topic in hidden_topics
                )
                # Pull-only items pass only when the user asks.
                if "remember" not in words and spec.pull_only:
                    forbidden = True
                if forbidden:
                    assert atom.atom_id not in text and marker not in text, (spec, text)
                # Text-only items on a voice channel are used, not said, unless the user asks.
                unsaid = (
                    "remember" not in words
                    and channel == "voice"
                    and spec.exposure == memory_pb2.EXPOSURE_SAFE_TO_TEXT
                )
                for carried in response.bundle.atoms:
                    if carried.atom_id == atom.atom_id:
                        assert carried.do_not_say == unsaid, (spec, text)
            for topic in hidden_topics:
                assert not mentions(response_text(response.bundle), topic), (topic, text)
                assert not any(mentions(term, topic) for term in response.hints.vocabulary)

        # Same request, same state, same bytes. A question asked is state (the gateway
        # remembers it per session): then the first answer is compared with the same
        # request in another fresh session, which has the same state.
        if first.bundle.HasField("clarification"):
            second = await user.brief(query, NOW_US, "p2", **options)
        assert first.SerializeToString(deterministic=True) == second.SerializeToString(
            deterministic=True
        )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=stores,
    archive=st.lists(st.sampled_from(TOPICS), max_size=3),
    hidden_topics=st.lists(st.sampled_from(TOPICS), max_size=1),
    words=queries,
    channel=st.sampled_from(("voice", "text")),
)
def test_brief_caps_determinism_and_no_leak(
    mesh: Mesh,
    specs: list[AtomSpec],
    archive: list[str],
    hidden_topics: list[str],
    words: list[str],
    channel: str,
) -> None:
    asyncio.run(check_example(mesh, specs, archive, hidden_topics, words, channel))
