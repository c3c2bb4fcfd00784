"""The bundle → prompt renderer: deterministic, within its budget, do-not-say items under
their instruction, tags explained."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.runtime.timeconv import timestamp_of
from memmesh.voice.prompt import DO_NOT_SAY_INSTRUCTION, HEADER, clip, render_bundle

NOW_US = 1_767_225_600_000_000


def fixed_bundle() -> bundle_pb2.ContextBundle:
    """A bundle with every part the renderer knows."""
    bundle = bundle_pb2.ContextBundle(
        push=bundle_pb2.PushMemory(
            display_name="Ana", primary_language="en", do_not_repeat_keys=["identity.name"]
        ),
        temporal=bundle_pb2.TemporalAuthority(
            now=timestamp_of(NOW_US), last_interaction_time=timestamp_of(NOW_US - 7_200_000_000)
        ),
        rolling_summary="We talked about dinner plans.",
        episode_bridge="Last time Ana planned a trip to Porto.",
        clarification=bundle_pb2.ClarificationQuestion(
            question_id="q1", text="Is Sarah still in Chicago?", reason_code="STALE"
        ),
    )
    bundle.temporal.time_since_last_interaction.seconds = 7200
    bundle.atoms.extend(
        [
            bundle_pb2.BundleAtom(
                atom_id="a1",
                text="User has a sister named Sarah.",
                tag=memory_pb2.MEMORY_TAG_CONFIRMED,
            ),
            bundle_pb2.BundleAtom(
                atom_id="a2",
                text="User's sister lives in Chicago.",
                tag=memory_pb2.MEMORY_TAG_STALE,
            ),
            bundle_pb2.BundleAtom(
                atom_id="a3",
                text="User is allergic to peanuts.",
                tag=memory_pb2.MEMORY_TAG_CONFIRMED,
                do_not_say=True,
                standing_constraint=True,
            ),
        ]
    )
    bundle.working_memory.extend(
        [
            bundle_pb2.BundleTurn(
                turn_id="t1", role=memory_pb2.ROLE_USER, text="what's for dinner?"
            ),
            bundle_pb2.BundleTurn(
                turn_id="t2",
                role=memory_pb2.ROLE_USER,
                text="my blood test came back",
                do_not_say=True,
            ),
        ]
    )
    bundle.active_loops.add(loop_id="l1", text="Book the dentist")
    bundle.digests.add(digest_id="d1", title="Porto trip", summary="Flights and a hotel.")
    bundle.entities.add(node_id="entity:porto", label="Porto")
    return bundle


def test_the_same_bundle_renders_byte_identical_text() -> None:
    first = render_bundle(fixed_bundle(), ("calm",))
    again = render_bundle(
        bundle_pb2.ContextBundle.FromString(fixed_bundle().SerializeToString()), ("calm",)
    )
    assert first.encode() == again.encode()
    assert first.startswith(HEADER)


def test_do_not_say_items_carry_the_instruction_and_are_not_listed_as_sayable() -> None:
    text = render_bundle(fixed_bundle())
    lines = text.splitlines()
    instruction = lines.index(DO_NOT_SAY_INSTRUCTION)
    assert "never say" in DO_NOT_SAY_INSTRUCTION
    assert lines[instruction + 1] == "- User is allergic to peanuts."
    assert lines[instruction + 2] == "- user: my blood test came back"
    # Not elsewhere: once, under the instruction.
    assert text.count("allergic to peanuts") == 1
    assert text.count("blood test") == 1


def test_tags_present_are_explained_and_the_one_question_is_carried() -> None:
    text = render_bundle(fixed_bundle())
    assert "- [STALE] User's sister lives in Chicago." in text
    assert "STALE = " in text and "CONFLICT = " not in text
    assert "Is Sarah still in Chicago?" in text
    assert "2 hours ago" in text
    assert "Last time Ana planned a trip to Porto." in text


def test_an_empty_bundle_renders_nothing() -> None:
    assert render_bundle(bundle_pb2.ContextBundle()) == ""


@given(st.integers(min_value=0, max_value=3000))
def test_the_text_never_exceeds_its_budget_and_keeps_the_instruction_while_items_remain(
    budget: int,
) -> None:
    text = render_bundle(fixed_bundle(), ("calm",), budget_bytes=budget)
    assert len(text.encode()) <= budget
    if "allergic to peanuts" in text or "blood test" in text:
        assert DO_NOT_SAY_INSTRUCTION in text


def test_a_short_budget_leaves_out_the_least_important_first() -> None:
    full = render_bundle(fixed_bundle(), ("calm",))
    short = render_bundle(fixed_bundle(), ("calm",), budget_bytes=len(full.encode()) // 2)
    assert "Tone:" not in short and "Related:" not in short
    assert DO_NOT_SAY_INSTRUCTION in short and "allergic to peanuts" in short


@st.composite
def bundles(draw: st.DrawFn) -> bundle_pb2.ContextBundle:
    """Bundles of any size: atoms and turns of random text, some of them do-not-say."""
    words = st.text(alphabet="abcdefghij éü字", min_size=1, max_size=400)
    bundle = bundle_pb2.ContextBundle(rolling_summary=draw(words))
    for index, (text, hidden, tag) in enumerate(
        draw(st.lists(st.tuples(words, st.booleans(), st.integers(0, 4)), max_size=25))
    ):
        bundle.atoms.add(
            atom_id=f"a{index}", text=f"atom{index} {text}", do_not_say=hidden, tag=tag
        )
    for index, (text, hidden) in enumerate(
        draw(st.lists(st.tuples(words, st.booleans()), max_size=6))
    ):
        bundle.working_memory.add(
            turn_id=f"t{index}",
            role=memory_pb2.ROLE_USER,
            text=f"turn{index} {text}",
            do_not_say=hidden,
        )
    return bundle


@given(bundles(), st.integers(min_value=0, max_value=4096))
def test_any_bundle_renders_the_same_text_within_budget_with_the_instruction_over_its_items(
    bundle: bundle_pb2.ContextBundle, budget: int
) -> None:
    text = render_bundle(bundle, budget_bytes=budget)
    copy = bundle_pb2.ContextBundle.FromString(bundle.SerializeToString())
    assert render_bundle(copy, budget_bytes=budget) == text
    assert len(text.encode()) <= budget
    lines = text.splitlines()
    hidden = [f"- {clip(a.text)}" for a in bundle.atoms if a.do_not_say]
    hidden += [f"- user: {clip(t.text)}" for t in bundle.working_memory if t.do_not_say]
    shown = [line for line in hidden if line in lines]
    if shown:
        instruction = lines.index(DO_NOT_SAY_INSTRUCTION)
        assert all(lines.index(line) > instruction for line in shown)
