"""Resume surfacing on a session start (seed 001 §2.21, §2.21A): HOT gets 1-3 "where we left
off" bullets, WARM exactly one question and no bullets, COLD nothing unless asked; the
user's resume preferences hold back surfacing only."""

from __future__ import annotations

import pytest
from composer_fakes import RuleGuard, atom, pass_all, query

from memmesh.common.v1 import bundle_pb2
from memmesh.engines.context_composer.domain.assemble import compose_bundle, guard_plan
from memmesh.engines.context_composer.domain.model import (
    Composed,
    Gathered,
    GuardVerdict,
    ResumeCandidate,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.domain.resume import LEFT_OFF_HEADER
from memmesh.engines.context_composer.mapping import bundle_size
from memmesh.engines.gateway.final_gate import apply_gate, gate_items

START = {"mode": "SESSION_START"}
BULLETS = (
    "Next step: order cedar boards for the garden shed",
    "Still open: which roof felt lasts longest?",
    "The shed goes behind the apple tree.",
)


def candidate(tier: str, bullets: tuple[str, ...] = BULLETS) -> ResumeCandidate:
    return ResumeCandidate("Previous session summary.", tier, "s-shed", "garden shed", bullets)


def compose(
    gathered: Gathered, text: str = "hi", verdict: GuardVerdict | None = None, **flags: object
) -> Composed:
    q = query(text, **flags)
    plan = guard_plan(q, gathered)
    return compose_bundle(q, gathered, plan, verdict or pass_all(plan.items), bundle_size)


def gathered(tier: str, facts: UserFacts | None = None, **kw: object) -> Gathered:
    return Gathered(facts or UserFacts(), Retrieved(**kw), SessionMemory(), candidate(tier))  # type: ignore[arg-type]


def bullet_lines(bridge: str) -> list[str]:
    lines = bridge.split("\n")
    assert lines[0] == LEFT_OFF_HEADER
    return lines[1:]


def test_hot_surfaces_one_to_three_bullets_from_the_thread_and_no_question() -> None:
    bundle = compose(gathered("HOT"), **START).bundle
    assert bullet_lines(bundle.episode_bridge) == [f"- {b}" for b in BULLETS]
    assert bundle.question is None
    one = Gathered(UserFacts(), Retrieved(), SessionMemory(), candidate("HOT", BULLETS[:1]))
    assert len(bullet_lines(compose(one, **START).bundle.episode_bridge)) == 1


def test_warm_asks_exactly_the_one_question_and_no_bullets() -> None:
    bundle = compose(gathered("WARM"), **START).bundle
    assert bundle.episode_bridge == ""
    assert bundle.question is not None
    assert bundle.question.text == "Do you want to resume garden shed or start something new?"
    assert bundle.question.reason_code == "RESUME" and bundle.question.atom_id == ""


def test_cold_surfaces_nothing_unless_asked() -> None:
    bundle = compose(gathered("COLD"), **START).bundle
    assert bundle.episode_bridge == "" and bundle.question is None
    asked = compose(gathered("COLD"), "where were we?", **START).bundle
    assert len(bullet_lines(asked.episode_bridge)) == 3 and asked.question is None


def test_nothing_surfaces_inside_a_session() -> None:
    for tier in ("HOT", "WARM"):
        bundle = compose(gathered(tier)).bundle
        assert bundle.episode_bridge == "" and bundle.question is None


@pytest.mark.parametrize(
    "facts", [UserFacts(auto_resume_disabled=True), UserFacts(recall_only_when_asked=True)]
)
def test_preferences_hold_back_surfacing_only(facts: UserFacts) -> None:
    for tier in ("HOT", "WARM"):
        bundle = compose(gathered(tier, facts), **START).bundle
        assert bundle.episode_bridge == "" and bundle.question is None
        asked = compose(gathered(tier, facts), "let's pick up where we left off", **START)
        assert len(bullet_lines(asked.bundle.episode_bridge)) == 3


def test_auto_resume_disabled_keeps_pulled_memory() -> None:
    facts = UserFacts(auto_resume_disabled=True)
    bundle = compose(gathered("HOT", facts, atoms=(atom(1),)), "what do I like", **START).bundle
    assert [t.atom.atom_id for t in bundle.atoms] == ["atom-001"]
    assert bundle.episode_bridge == ""


async def verdict_of(guard: RuleGuard, gathered: Gathered) -> GuardVerdict:
    plan = guard_plan(query("hi", **START), gathered)
    return await guard.filter("t1", "u1", "VOICE", plan.items, False, False)


async def test_a_do_not_mention_subject_is_cut_from_the_bullets_and_the_question() -> None:
    hot = gathered("HOT")
    verdict = await verdict_of(RuleGuard(do_not_mention_topics={"felt"}), hot)
    bridge = compose(hot, verdict=verdict, **START).bundle.episode_bridge
    assert "felt" not in bridge and len(bullet_lines(bridge)) == 2
    warm = gathered("WARM")
    verdict = await verdict_of(RuleGuard(do_not_mention_topics={"shed"}), warm)
    bundle = compose(warm, verdict=verdict, **START).bundle
    assert bundle.question is None and bundle.episode_bridge == ""


def test_a_question_about_the_request_comes_before_the_resume_question() -> None:
    conflict = (
        atom(1, key="home.city", text="User lives in Porto", status="CONFLICT"),
        atom(2, key="home.city", text="User lives in Lisbon", status="CONFLICT"),
    )
    bundle = compose(gathered("WARM", atoms=conflict), "where do I live?", **START).bundle
    assert bundle.question is not None and bundle.question.reason_code != "RESUME"


def test_the_final_gate_keeps_the_resume_question_unless_it_holds_it_back() -> None:
    question = bundle_pb2.ClarificationQuestion(
        question_id="q-1", text="Do you want to resume garden shed or start something new?"
    )
    bundle = bundle_pb2.ContextBundle(clarification=question)
    items = gate_items(bundle, "s1")
    allowed = {i.item_id for i in items}
    assert apply_gate(bundle, items, allowed).bundle.HasField("clarification")
    assert not apply_gate(bundle, items, set()).bundle.HasField("clarification")
    # A memory question still goes with the atom it is about.
    about_atom = bundle_pb2.ContextBundle(
        atoms=[bundle_pb2.BundleAtom(atom_id="atom-9", text="User lives in Porto")],
        clarification=bundle_pb2.ClarificationQuestion(atom_id="atom-9", text="Porto?"),
    )
    items = gate_items(about_atom, "s1")
    kept_ids = {i.item_id for i in items if i.atom_id != "atom-9" or i.item_id == "q"}
    assert not apply_gate(about_atom, items, kept_ids).bundle.HasField("clarification")


@pytest.mark.parametrize(
    ("tier", "days", "remember_everything", "surfaced"),
    [
        ("WARM", 5, True, "bullets"),
        ("WARM", 5, False, "question"),
        ("COLD", 60, True, "question"),
        ("COLD", 60, False, "nothing"),
        ("COLD", 120, True, "nothing"),
        ("HOT", 1, True, "bullets"),
    ],
)
def test_remember_everything_widens_the_windows_and_never_narrows_them(
    tier: str, days: int, remember_everything: bool, surfaced: str
) -> None:
    last_used = 1_767_225_600 * 1_000_000 - days * 86_400 * 1_000_000
    top = ResumeCandidate(
        "Previous session summary.", tier, "s-shed", "garden shed", BULLETS, last_used
    )
    facts = UserFacts(remember_everything=remember_everything)
    bundle = compose(Gathered(facts, Retrieved(), SessionMemory(), top), **START).bundle
    found = (
        "bullets"
        if bundle.episode_bridge
        else "question"
        if bundle.question is not None
        else "nothing"
    )
    assert found == surfaced
