"""Pending work continuity on a session start (seed 001 §2.21B): the top pending work order
updated within 72 h is offered as "Pending"/"Waiting on" bullets, within 30 days as exactly
one question; it goes before the thread's offer, which is then not added; the resume
preferences hold it back; REMEMBER_EVERYTHING widens the windows; nothing is offered in
session or past the WARM window."""

from __future__ import annotations

import pytest
from composer_fakes import DAY_US, NOW_US, FakeSources, RuleGuard, StatePort, pass_all, query

from memmesh.engines.context_composer.domain.assemble import compose_bundle, guard_plan
from memmesh.engines.context_composer.domain.model import (
    Composed,
    Gathered,
    PendingWork,
    ResumeCandidate,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.domain.resume import LEFT_OFF_HEADER
from memmesh.engines.context_composer.mapping import bundle_size
from memmesh.engines.context_composer.use_cases import Composer
from memmesh.errors import DependencyFailed

START = {"mode": "SESSION_START"}
THREAD = ResumeCandidate("Summary.", "HOT", "s-shed", "garden shed", ("Next step: order boards",))
WARM_THREAD = ResumeCandidate("Summary.", "WARM", "s-shed", "garden shed", ("Next: boards",))


def work(age_days: float, question: str = "For how many people?") -> PendingWork:
    return PendingWork("wo-1", "book a table for Friday", question, NOW_US - int(age_days * DAY_US))


def compose(
    pending: PendingWork | None,
    text: str = "hi",
    facts: UserFacts | None = None,
    thread: ResumeCandidate | None = THREAD,
    **flags: object,
) -> Composed:
    gathered = Gathered(
        facts or UserFacts(), Retrieved(), SessionMemory(), thread, pending_work=pending
    )
    q = query(text, **flags)
    plan = guard_plan(q, gathered)
    return compose_bundle(q, gathered, plan, pass_all(plan.items), bundle_size)


def test_a_hot_pending_order_is_offered_as_bullets_before_the_thread() -> None:
    composed = compose(work(1), **START)
    assert composed.bundle.episode_bridge.split("\n") == [
        LEFT_OFF_HEADER,
        "- Pending: book a table for Friday",
        "- Waiting on: For how many people?",
    ]
    assert composed.bundle.question is None
    assert composed.offered_work_order_id == "wo-1"


def test_without_a_pending_question_one_bullet_is_offered() -> None:
    bridge = compose(work(1, question=""), **START).bundle.episode_bridge
    assert bridge.split("\n") == [LEFT_OFF_HEADER, "- Pending: book a table for Friday"]


def test_a_warm_pending_order_is_the_one_question_and_the_thread_question_is_not_added() -> None:
    composed = compose(work(10), thread=WARM_THREAD, **START)
    bundle = composed.bundle
    assert bundle.episode_bridge == ""
    assert bundle.question is not None
    assert bundle.question.text == (
        "Do you want to resume book a table for Friday or start something new?"
    )
    assert bundle.question.reason_code == "RESUME"
    assert composed.counters.clarification_due_to_memory_count == 1
    assert composed.offered_work_order_id == "wo-1"


def test_the_work_question_id_differs_from_the_threads() -> None:
    ours = compose(work(10), thread=WARM_THREAD, **START).bundle.question
    theirs = compose(None, thread=WARM_THREAD, **START).bundle.question
    assert ours is not None and theirs is not None and ours.question_id != theirs.question_id


def test_past_the_warm_window_the_thread_is_offered_instead() -> None:
    composed = compose(work(31), **START)
    assert "order boards" in composed.bundle.episode_bridge
    assert "table" not in composed.bundle.episode_bridge
    assert composed.offered_work_order_id == ""


@pytest.mark.parametrize(("age_days", "bullets"), [(5, True), (60, False), (89, False), (91, None)])
def test_remember_everything_widens_the_windows(age_days: float, bullets: bool | None) -> None:
    composed = compose(work(age_days), facts=UserFacts(remember_everything=True), **START)
    if bullets is None:
        assert composed.offered_work_order_id == ""
    elif bullets:
        assert "Pending: book a table" in composed.bundle.episode_bridge
    else:
        assert composed.bundle.question is not None and composed.bundle.episode_bridge == ""


@pytest.mark.parametrize(
    "facts", [UserFacts(auto_resume_disabled=True), UserFacts(recall_only_when_asked=True)]
)
def test_resume_preferences_hold_it_back_unless_the_user_asks_to_pick_up(
    facts: UserFacts,
) -> None:
    held = compose(work(1), facts=facts, **START)
    assert held.bundle.episode_bridge == "" and held.bundle.question is None
    assert held.offered_work_order_id == ""
    asked = compose(work(10), "where were we?", facts=facts, **START)
    assert "Pending: book a table" in asked.bundle.episode_bridge


def test_nothing_is_offered_in_session() -> None:
    composed = compose(work(1))
    assert composed.bundle.episode_bridge == "" and composed.offered_work_order_id == ""


def test_a_thread_asked_for_by_name_goes_before_pending_work() -> None:
    composed = compose(work(1), resume_thread_id="s-shed", **START)
    assert "order boards" in composed.bundle.episode_bridge
    assert composed.offered_work_order_id == ""


async def test_the_composer_reads_pending_work_on_a_session_start_and_not_in_session() -> None:
    sources = FakeSources(pending_work=work(1), resume_candidate=THREAD)
    composer = Composer(StatePort(sources), sources, sources, RuleGuard(), None, bundle_size)
    started = await composer.compose(query("hi", mode="SESSION_START"))
    assert started.offered_work_order_id == "wo-1"
    sources.failing["work_orders"] = DependencyFailed("current_state", "UNAVAILABLE")
    # Tier 1, as the rest of Current State: a failure fails the session start's bundle.
    with pytest.raises(DependencyFailed):
        await composer.compose(query("hi", mode="SESSION_START"))
    # In session the work orders are not read at all.
    assert (await composer.compose(query("hi"))).offered_work_order_id == ""
