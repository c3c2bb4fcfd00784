"""The session part is one ThreadStore call a turn: a mode the query leaves open is decided
there and gives the same bundle as with that mode given; the same Tier rules hold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from composer_fakes import FakeSources, RuleGuard, StatePort, atom, query, turn

from memmesh.engines.context_composer.domain.model import (
    UNDECIDED,
    ResumeCandidate,
    Retrieved,
    SessionContext,
    SessionMemory,
)
from memmesh.engines.context_composer.mapping import bundle_size
from memmesh.engines.context_composer.use_cases import Composer
from memmesh.runtime.errors import DependencyFailed


@dataclass
class DecidingSources(FakeSources):
    """Sources whose ThreadStore also answers the one-call session context, deciding `mode`."""

    decided: str = "SESSION_START"
    resume_fails: bool = False
    calls: list[str] = field(default_factory=list)

    async def session_context(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        max_turns: int,
        now_us: int,
        mode: str,
        entity_node_ids: Sequence[str] = (),
        entity_fan_out: int = 0,
        resume_thread_id: str = "",
    ) -> SessionContext:
        self.calls.append(f"session_context:{mode}")
        self._check("working_memory")
        decided = self.decided if mode == UNDECIDED else mode
        resume = (
            self.resume_candidate if decided == "SESSION_START" and not self.resume_fails else None
        )
        return SessionContext(decided, self.session, resume)


def composer(sources: DecidingSources) -> Composer:
    return Composer(StatePort(sources), sources, sources, RuleGuard(), sources, bundle_size)


def sources(**overrides: object) -> DecidingSources:
    values: dict[str, object] = {
        "retrieved": Retrieved(atoms=(atom(1), atom(2)), turns=(turn(1), turn(2))),
        "session": SessionMemory(
            turns=(turn(9, session="s-now"),), rolling_summary="We planned the trip."
        ),
        "resume_candidate": ResumeCandidate(
            "Last time you planned the trip to Rome.", "HOT", left_off=("You planned Rome.",)
        ),
    }
    values.update(overrides)
    return DecidingSources(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("decided", ["SESSION_START", "IN_SESSION"])
async def test_a_decided_mode_composes_the_bundle_of_that_mode_in_one_call(decided: str) -> None:
    deciding = sources(decided=decided)
    composed = await composer(deciding).compose(query("where were we?", mode=UNDECIDED))
    given = sources(decided=decided)
    expected = await composer(given).compose(query("where were we?", mode=decided))
    assert composed == expected
    assert composed.bundle.mode == decided
    # One ThreadStore call either way: an open mode is decided there, a given one passed on.
    assert deciding.calls == ["session_context:UNSPECIFIED"]
    assert given.calls == [f"session_context:{decided}"]


async def test_a_decided_session_start_without_its_resume_is_tier2_degraded() -> None:
    composed = await composer(sources(resume_fails=True)).compose(
        query("where were we?", mode=UNDECIDED)
    )
    assert composed.degraded_parts == ("episode_bridge",)
    assert composed.bundle.episode_bridge == "" and composed.bundle.mode == "SESSION_START"
    assert len(composed.bundle.atoms) == 2


async def test_a_failed_session_context_fails_the_whole_compose() -> None:
    failing = sources(failing={"working_memory": DependencyFailed("thread_store", "UNAVAILABLE")})
    with pytest.raises(DependencyFailed) as raised:
        await composer(failing).compose(query(mode=UNDECIDED))
    assert "thread_store" in raised.value.message
