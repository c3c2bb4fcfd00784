"""The Compose use case: parallel gather, filter before caps, fail closed on Tier 1, Tier 2 flagged."""

from __future__ import annotations

import json
import logging

import pytest
from composer_fakes import FakeSources, RuleGuard, StatePort, atom, query, turn

from memmesh.engines.context_composer.compose import Composer, turn_record
from memmesh.engines.context_composer.mapping import bundle_size
from memmesh.engines.context_composer.model import ResumeCandidate, Retrieved, SessionMemory
from memmesh.engines.context_composer.ports import DependencyError
from memmesh.runtime.errors import DependencyFailed


def composer(sources: FakeSources, guard: RuleGuard | None = None, with_corrections: bool = True) -> Composer:
    return Composer(StatePort(sources), sources, sources, guard or RuleGuard(), sources if with_corrections else None, bundle_size)


@pytest.mark.parametrize("part", ["state", "ranker", "working_memory"])
async def test_tier1_failure_fails_the_whole_compose(part: str) -> None:
    sources = FakeSources(retrieved=Retrieved(atoms=(atom(1),)), failing={part: DependencyError(part, timed_out=False)})
    with pytest.raises(DependencyFailed) as raised:
        await composer(sources).compose(query())
    assert part in raised.value.message


async def test_tier1_timeout_is_deadline_exceeded() -> None:
    sources = FakeSources(failing={"ranker": DependencyError("retrieval_ranker", timed_out=True)})
    with pytest.raises(Exception) as raised:
        await composer(sources).compose(query())
    assert raised.value.status_name == "DEADLINE_EXCEEDED"  # type: ignore[attr-defined]
    assert "retrieval_ranker" in str(raised.value)


async def test_guard_failure_fails_closed() -> None:
    guard = RuleGuard(fail=DependencyError("exposure_guard", timed_out=False))
    with pytest.raises(DependencyFailed):
        await composer(FakeSources(retrieved=Retrieved(atoms=(atom(1),))), guard).compose(query())


async def test_tier2_failures_are_left_out_and_named() -> None:
    sources = FakeSources(
        resume_candidate=ResumeCandidate("Bridge.", "HOT"),
        failing={"resume": DependencyError("thread_store", False), "corrections": DependencyError("atom_extractor", False)},
        retrieved=Retrieved(atoms=(atom(1),)),
    )
    composed = await composer(sources).compose(query(mode="SESSION_START"))
    assert composed.degraded_parts == ("episode_bridge", "corrections")
    assert composed.bundle.episode_bridge == ""
    assert len(composed.bundle.atoms) == 1


async def test_every_candidate_goes_through_the_guard_before_caps() -> None:
    guard = RuleGuard()
    sources = FakeSources(
        retrieved=Retrieved(atoms=tuple(atom(i) for i in range(20)), turns=(turn(1), turn(2), turn(3))),
        session=SessionMemory(turns=(turn(9, session="s-now"),), rolling_summary="sum"),
    )
    await composer(sources, guard).compose(query())
    offered = {item.item_id for item in guard.calls[0]}
    assert {f"a{i}" for i in range(20)} | {"e0", "e1", "e2", "w0", "s"} <= offered


async def test_per_turn_log_line_is_small_json_without_text(caplog: pytest.LogCaptureFixture) -> None:
    sources = FakeSources(retrieved=Retrieved(atoms=(atom(1, text="User's secret hobby is fencing"),)))
    with caplog.at_level(logging.INFO, logger="memmesh.context_composer.turn"):
        composed = await composer(sources).compose(query("what is my hobby"))
    line = turn_record(query("what is my hobby"), composed)
    assert len(line.encode()) <= 1024
    record = json.loads(line)
    assert record["atoms_selected_count"] == 1 and record["user"] != "u1"
    assert "fencing" not in line and "hobby" not in line
    assert any("atoms_selected_count" in r.getMessage() for r in caplog.records)
