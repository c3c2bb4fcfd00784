"""The Compose use case: parallel gather, filter before caps, fail closed on Tier 1, Tier 2 flagged."""

from __future__ import annotations

import json
import logging

import pytest
from composer_fakes import DAY_US, NOW_US, FakeSources, RuleGuard, StatePort, atom, query, turn

from memmesh.engines.context_composer.domain.assemble import ENTITY_LOOKUPS
from memmesh.engines.context_composer.domain.model import (
    CorrectionPair,
    Entity,
    Loop,
    ResumeCandidate,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.domain.text import entity_node_ids
from memmesh.engines.context_composer.mapping import bundle_size
from memmesh.engines.context_composer.use_cases import Composer, turn_record
from memmesh.runtime.errors import DependencyFailed


def composer(
    sources: FakeSources, guard: RuleGuard | None = None, with_corrections: bool = True
) -> Composer:
    return Composer(
        StatePort(sources),
        sources,
        sources,
        guard or RuleGuard(),
        sources if with_corrections else None,
        bundle_size,
    )


@pytest.mark.parametrize(
    ("part", "engine"), [("state", "current_state"), ("working_memory", "thread_store")]
)
async def test_tier1_failure_fails_the_whole_compose_naming_the_engine(
    part: str, engine: str
) -> None:
    sources = FakeSources(
        retrieved=Retrieved(atoms=(atom(1),)),
        failing={part: DependencyFailed(engine, "UNAVAILABLE")},
    )
    with pytest.raises(DependencyFailed) as raised:
        await composer(sources).compose(query())
    assert raised.value.engine == engine and raised.value.metadata["engine"] == engine
    assert raised.value.status_name == "UNAVAILABLE"


async def test_tier1_timeout_is_deadline_exceeded() -> None:
    sources = FakeSources(
        failing={"working_memory": DependencyFailed("thread_store", "DEADLINE_EXCEEDED")}
    )
    with pytest.raises(DependencyFailed) as raised:
        await composer(sources).compose(query())
    assert raised.value.status_name == "DEADLINE_EXCEEDED" and raised.value.engine == "thread_store"


def tier1_sources(**failing: DependencyFailed) -> FakeSources:
    """Every part filled: Tier 1 (name, working memory, summary, loops) and Tier 2."""
    return FakeSources(
        facts=UserFacts(display_name="Sam", last_interaction_us=NOW_US - 60_000_000),
        retrieved=Retrieved(atoms=(atom(1),), turns=(turn(1),)),
        session=SessionMemory(
            turns=(turn(9, session="s-now"),),
            rolling_summary="We planned the trip.",
            loops=(
                Loop("loop-1", "commitment", "Book the dentist", 3, NOW_US - DAY_US, "turn-009"),
            ),
        ),
        resume_candidate=ResumeCandidate(
            "Last time you planned the trip.", "HOT", left_off=("You planned the trip.",)
        ),
        pairs=(CorrectionPair("sara", "Sarah"),),
        entities=(Entity("entity:portland", "Portland", "entity:sarah", "Sarah", 2),),
        failing=dict(failing),
    )


async def test_ranker_failure_keeps_every_tier1_part_and_names_the_ranker() -> None:
    sources = tier1_sources(ranker=DependencyFailed("retrieval_ranker", "UNAVAILABLE"))
    composed = await composer(sources).compose(query("how is sarah", mode="SESSION_START"))
    bundle = composed.bundle
    assert composed.degraded_parts == ("retrieval_ranker",)
    assert bundle.atoms == () and bundle.excerpts == () and bundle.digests == ()
    assert [t.turn_id for t in bundle.working_memory] == ["turn-009"]
    assert bundle.rolling_summary == "We planned the trip."
    assert [lp.loop_id for lp in bundle.loops] == ["loop-1"]
    assert bundle.push.display_name == "Sam" and bundle.last_interaction_us == NOW_US - 60_000_000
    assert bundle.episode_bridge and [e.label for e in bundle.entities] == ["Portland"]


async def test_ranker_timeout_is_tier2_too() -> None:
    sources = tier1_sources(ranker=DependencyFailed("retrieval_ranker", "DEADLINE_EXCEEDED"))
    composed = await composer(sources).compose(query("how is sarah"))
    assert composed.degraded_parts == ("retrieval_ranker",) and composed.bundle.working_memory


@pytest.mark.parametrize(
    ("part", "engine", "degraded"),
    [
        ("resume", "thread_store", "episode_bridge"),
        ("entities", "thread_store", "entities"),
        ("corrections", "atom_extractor", "corrections"),
    ],
)
async def test_each_tier2_failure_leaves_only_its_part_out(
    part: str, engine: str, degraded: str
) -> None:
    sources = tier1_sources(**{part: DependencyFailed(engine, "UNAVAILABLE")})
    composed = await composer(sources).compose(query("how is sarah", mode="SESSION_START"))
    bundle = composed.bundle
    assert composed.degraded_parts == (degraded,)
    assert [a.atom.atom_id for a in bundle.atoms] == ["atom-001"]
    assert bundle.working_memory and bundle.rolling_summary and bundle.loops
    assert bool(bundle.episode_bridge) == (degraded != "episode_bridge")
    assert bool(bundle.entities) == (degraded != "entities")
    assert bool(composed.hints.corrections) == (degraded != "corrections")


async def test_entities_are_neighbours_of_what_the_query_names_and_pass_the_guard() -> None:
    sources = tier1_sources()
    sources.entities = (
        Entity("entity:portland", "Portland", "entity:sarah", "Sarah", 3),
        Entity("entity:tom", "Tom", "entity:sarah", "Sarah", 2),
        Entity("entity:sarah", "Sarah", "entity:tom", "Tom", 2),
    )
    composed = await composer(sources, RuleGuard(do_not_mention_topics={"portland"})).compose(
        query("is sarah with tom")
    )
    # Tom is named by the query itself; Portland is held back by a DO_NOT_MENTION rule.
    assert composed.bundle.entities == ()
    composed = await composer(sources).compose(query("how is sarah"))
    assert [e.node_id for e in composed.bundle.entities] == ["entity:portland", "entity:tom"]
    sources.failing["entities"] = DependencyFailed("thread_store", "UNAVAILABLE")
    # A query naming nothing asks the graph nothing, so it cannot degrade.
    silent = await composer(sources).compose(query(""))
    assert silent.bundle.entities == () and silent.degraded_parts == ()


async def test_guard_failure_fails_closed() -> None:
    guard = RuleGuard(fail=DependencyFailed("exposure_guard", "UNAVAILABLE"))
    with pytest.raises(DependencyFailed):
        await composer(FakeSources(retrieved=Retrieved(atoms=(atom(1),))), guard).compose(query())


async def test_tier2_failures_are_left_out_and_named() -> None:
    sources = FakeSources(
        resume_candidate=ResumeCandidate("Bridge.", "HOT"),
        failing={
            "resume": DependencyFailed("thread_store", "UNAVAILABLE"),
            "corrections": DependencyFailed("atom_extractor", "UNAVAILABLE"),
        },
        retrieved=Retrieved(atoms=(atom(1),)),
    )
    composed = await composer(sources).compose(query(mode="SESSION_START"))
    assert composed.degraded_parts == ("episode_bridge", "corrections")
    assert composed.bundle.episode_bridge == ""
    assert len(composed.bundle.atoms) == 1


async def test_every_candidate_goes_through_the_guard_before_caps() -> None:
    guard = RuleGuard()
    sources = FakeSources(
        retrieved=Retrieved(
            atoms=tuple(atom(i) for i in range(20)), turns=(turn(1), turn(2), turn(3))
        ),
        session=SessionMemory(turns=(turn(9, session="s-now"),), rolling_summary="sum"),
    )
    await composer(sources, guard).compose(query())
    offered = {item.item_id for item in guard.calls[0]}
    assert {f"a{i}" for i in range(20)} | {"e0", "e1", "e2", "w0", "s0"} <= offered


async def test_per_turn_log_line_is_small_json_without_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sources = FakeSources(
        retrieved=Retrieved(atoms=(atom(1, text="User's secret hobby is fencing"),))
    )
    with caplog.at_level(logging.INFO, logger="memmesh.context_composer.turn"):
        composed = await composer(sources).compose(query("what is my hobby"))
    line = turn_record(query("what is my hobby"), composed)
    assert len(line.encode()) <= 1024
    record = json.loads(line)
    assert record["atoms_selected_count"] == 1 and record["user"] != "u1"
    assert "fencing" not in line and "hobby" not in line
    assert any("atoms_selected_count" in r.getMessage() for r in caplog.records)


def test_graph_lookups_are_the_query_words_and_pairs_within_the_lookup_limit() -> None:
    ids = entity_node_ids("Is Sarah in New York with the Featherstonehaughs?", ENTITY_LOOKUPS)
    assert ids[:4] == ("entity:sarah", "entity:new", "entity:york", "entity:with")
    assert "entity:new-york" in ids and "entity:is" not in ids
    # A long name is looked up too: no id length limit cuts it out.
    assert "entity:featherstonehaughs" in ids and "entity:the-featherstonehaughs" in ids
    assert len(ids) <= ENTITY_LOOKUPS
    many = entity_node_ids(
        " ".join(f"name{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(40)), ENTITY_LOOKUPS
    )
    assert len(many) == ENTITY_LOOKUPS


async def test_a_compose_cancelled_before_its_parts_start_leaves_no_call_unawaited() -> None:
    """A turn whose deadline passes while its parts are only scheduled makes no call it then
    drops (Python would warn of a coroutine never awaited, and a call would be half made)."""
    import asyncio
    import gc
    import warnings

    sources = FakeSources(retrieved=Retrieved(atoms=(atom(1),)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = asyncio.ensure_future(composer(sources).compose(query()))
        # One step: compose runs up to its gather, whose parts are scheduled, not started.
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gc.collect()
    never_awaited = [w for w in caught if "never awaited" in str(w.message)]
    assert not never_awaited, [str(w.message) for w in never_awaited]
