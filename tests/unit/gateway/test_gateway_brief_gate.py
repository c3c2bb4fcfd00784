"""The Brief's fail-closed reason codes, derived from the error naming the engine at fault,
and its final gate: each bundle part offered to the guard again, what it holds back removed."""

from __future__ import annotations

import pytest

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.engines.gateway.final_gate import apply_gate, gate_items, prune_vocabulary, recount
from memmesh.engines.gateway.outcomes import BUDGET_EXCEEDED, reason_code
from memmesh.errors import DeadlineExpired, DependencyFailed


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (DependencyFailed("context_composer", "DEADLINE_EXCEEDED"), BUDGET_EXCEEDED),
        (DependencyFailed("thread_store", "DEADLINE_EXCEEDED"), BUDGET_EXCEEDED),
        (DeadlineExpired("spent"), BUDGET_EXCEEDED),
        (DependencyFailed("exposure_guard", "UNAVAILABLE"), "TIER1_UNAVAILABLE:exposure_guard"),
        (DependencyFailed("current_state", "UNAVAILABLE"), "TIER1_UNAVAILABLE:current_state"),
        (
            DependencyFailed("context_composer", "INVALID_ARGUMENT"),
            "TIER1_UNAVAILABLE:context_composer",
        ),
    ],
)
def test_failures_map_to_reason_codes_naming_the_engine_at_fault(
    error: DependencyFailed | DeadlineExpired, reason: str
) -> None:
    assert reason_code(error) == reason


def sample_bundle() -> bundle_pb2.ContextBundle:
    bundle = bundle_pb2.ContextBundle(
        push=bundle_pb2.PushMemory(display_name="Sam"),
        atoms=[
            bundle_pb2.BundleAtom(
                atom_id="a1",
                key="relationship.sister",
                text="User's sister is Ana",
                tag=memory_pb2.MEMORY_TAG_TENTATIVE,
                exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
            ),
            bundle_pb2.BundleAtom(
                atom_id="a2",
                key="preference.music",
                text="User likes jazz",
                tag=memory_pb2.MEMORY_TAG_CONFIRMED,
                exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
            ),
        ],
        working_memory=[bundle_pb2.BundleTurn(turn_id="t1", session_id="s", text="hello")],
        rolling_summary="We spoke about Ana.",
        clarification=bundle_pb2.ClarificationQuestion(
            question_id="q1",
            atom_id="a1",
            key="relationship.sister",
            text="Is Ana your sister?",
            reason_code="LOW_CONFIDENCE",
        ),
    )
    return bundle


def test_final_gate_removes_what_the_guard_holds_back_and_recounts() -> None:
    bundle = sample_bundle()
    items = gate_items(bundle)
    assert {i.item_id for i in items} == {"a0", "a1", "w0", "s0", "n", "q"}
    allowed = {"a1", "w0", "n"}
    gated = apply_gate(bundle, items, allowed)
    assert [a.atom_id for a in gated.bundle.atoms] == ["a2"]
    assert not gated.bundle.HasField("clarification")
    assert gated.bundle.rolling_summary == ""
    counters = recount(bundle_pb2.BundleCounters(do_not_mention_hits_count=2), gated.bundle, 3)
    assert (
        counters.atoms_selected_count,
        counters.confirmed_count,
        counters.clarification_due_to_memory_count,
    ) == (1, 1, 0)
    assert counters.do_not_mention_hits_count == 5
    assert counters.context_bundle_bytes == gated.bundle.ByteSize()
    hints = prune_vocabulary(bundle_pb2.HintBundle(vocabulary=["Ana", "Sam"]), gated.removed_texts)
    assert list(hints.vocabulary) == ["Sam"]


def test_final_gate_passing_everything_returns_the_bundle_unchanged() -> None:
    bundle = sample_bundle()
    items = gate_items(bundle)
    gated = apply_gate(bundle, items, {i.item_id for i in items})
    assert gated.bundle is bundle and gated.removed_texts == ()


def test_final_gate_marks_what_the_guard_lets_pass_do_not_say_and_keeps_composer_marks() -> None:
    bundle = sample_bundle()
    bundle.atoms[1].do_not_say = True  # marked by the composer: the gate never clears a mark
    bundle.excerpts.add(turn_id="t0", session_id="s0", text="I'm allergic to peanuts")
    items = gate_items(bundle)
    everything = {i.item_id for i in items}
    gated = apply_gate(bundle, items, everything, {"a0", "e0"})
    assert [a.do_not_say for a in gated.bundle.atoms] == [True, True]
    assert gated.bundle.excerpts[0].do_not_say
    assert not gated.bundle.working_memory[0].do_not_say
    assert gated.removed_texts == ()
    assert not bundle.atoms[0].do_not_say  # the composed bundle itself is left as it was
    # A question about a fact not to be said would say it: it goes, the atom stays.
    asked = apply_gate(bundle, items, everything, {"q"})
    assert not asked.bundle.HasField("clarification")
    assert [a.atom_id for a in asked.bundle.atoms] == ["a1", "a2"]


def test_final_gate_marks_survive_removals_at_the_index_the_guard_named() -> None:
    bundle = sample_bundle()
    items = gate_items(bundle)
    gated = apply_gate(bundle, items, {"a1", "w0", "n"}, {"a1"})
    assert [(a.atom_id, a.do_not_say) for a in gated.bundle.atoms] == [("a2", True)]
