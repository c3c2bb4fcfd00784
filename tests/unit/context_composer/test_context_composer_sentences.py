"""A DO_NOT_MENTION subject is cut out of the rolling summary and the episode bridge sentence
by sentence; what is still allowed stays (the part is never dropped whole for one sentence)."""

from __future__ import annotations

from composer_fakes import FakeSources, RuleGuard, StatePort, query

from memmesh.bundle_items import bridge_items, kept_sentences, summary_items
from memmesh.common.v1 import bundle_pb2
from memmesh.engines.context_composer.domain.model import (
    SESSION_START,
    ResumeCandidate,
    SessionMemory,
)
from memmesh.engines.context_composer.mapping import bundle_size
from memmesh.engines.context_composer.use_cases import Composer
from memmesh.engines.gateway.final_gate import apply_gate, gate_hints, gate_items, hint_items
from memmesh.text import sentences

SUMMARY = "We talked about Kwame's birthday. We planned the Lisbon trip. Kwame likes jazz."
BRIDGE = "Last time you planned a present for Kwame. You also booked flights to Lisbon."


def test_sentences_are_items_and_the_text_is_rebuilt_from_those_that_passed() -> None:
    items = summary_items(SUMMARY, "s1")
    assert [(i.item_id, i.thread_id) for i in items] == [("s0", "s1"), ("s1", "s1"), ("s2", "s1")]
    assert kept_sentences("s", SUMMARY, {"s1"}) == "We planned the Lisbon trip."
    assert kept_sentences("s", SUMMARY, {"s0", "s1", "s2"}) == SUMMARY
    assert kept_sentences("s", SUMMARY, set()) == ""
    assert [i.item_id for i in bridge_items(BRIDGE)] == ["b0", "b1"]
    assert kept_sentences("s", "", set()) == ""


def sources() -> FakeSources:
    return FakeSources(
        session=SessionMemory(rolling_summary=SUMMARY),
        resume_candidate=ResumeCandidate(
            episode_bridge=BRIDGE, tier="HOT", left_off=tuple(sentences(BRIDGE))
        ),
    )


async def test_the_summary_and_the_bridge_keep_their_allowed_sentences() -> None:
    guard = RuleGuard(do_not_mention_topics={"kwame", "kwame's"})
    composed = await Composer(
        StatePort(sources()), sources(), sources(), guard, None, bundle_size
    ).compose(query("hello again", mode=SESSION_START))
    bundle = composed.bundle
    assert bundle.rolling_summary == "We planned the Lisbon trip."
    assert bundle.episode_bridge == "Where we left off:\n- You also booked flights to Lisbon."
    assert "kwame" not in f"{bundle.rolling_summary} {bundle.episode_bridge}".lower()


async def test_without_rules_the_summary_and_the_bridge_are_as_stored() -> None:
    composed = await Composer(
        StatePort(sources()), sources(), sources(), RuleGuard(), None, bundle_size
    ).compose(query("hello again", mode=SESSION_START))
    bullets = "\n".join(f"- {s}" for s in sentences(BRIDGE))
    assert composed.bundle.rolling_summary == SUMMARY
    assert composed.bundle.episode_bridge == f"Where we left off:\n{bullets}"


def test_the_final_gate_cuts_sentences_and_hint_terms_it_holds_back() -> None:
    bundle = bundle_pb2.ContextBundle(rolling_summary=SUMMARY, episode_bridge=BRIDGE)
    hints = bundle_pb2.HintBundle(
        vocabulary=["Kwame", "Lisbon"],
        corrections=[bundle_pb2.CorrectionPair(heard="kwami", meant="Kwame")],
    )
    items = gate_items(bundle, "s1") + hint_items(hints)
    allowed = {i.item_id for i in items if "kwam" not in i.text.lower()}
    gated = apply_gate(bundle, gate_items(bundle, "s1"), allowed).bundle
    assert gated.rolling_summary == "We planned the Lisbon trip."
    assert gated.episode_bridge == "You also booked flights to Lisbon."
    kept_hints = gate_hints(hints, allowed)
    assert list(kept_hints.vocabulary) == ["Lisbon"] and not kept_hints.corrections
    assert gate_hints(hints, {i.item_id for i in items}) is hints
