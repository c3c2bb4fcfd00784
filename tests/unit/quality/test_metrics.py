"""The §2.12 metrics from labels and observed Briefs, and the fixture format's checks."""

from __future__ import annotations

import pytest

from memmesh.quality.fixtures import FixtureError, parse_fixture
from memmesh.quality.metrics import BriefObservation, score

FACTS = {
    "sister": {"words": ["sister"]},
    "peanut": {"words": ["peanut"]},
    "ex": {"words": ["breakup"]},
}


def fixture(steps: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    return parse_fixture({"name": "f", "facts": FACTS, "steps": steps})


def test_each_metric_counts_what_its_definition_says() -> None:
    f = fixture(
        [
            {"say": "My sister is Marta.", "states": ["sister"]},
            {"brief": "gift for my sister?", "needed": ["sister", "peanut"]},
            {"say": "No, she is Maria.", "corrects": ["sister"]},
            {"brief": "how was my year?"},
            {"say": "don't bring up the breakup", "discomfort": ["ex"]},
            {"command": "DO_NOT_MENTION", "target": "breakup", "about": ["ex"]},
            {"brief": "dinner?", "useful": ["peanut"]},
        ]
    )
    observed = [
        BriefObservation(
            1,
            ("User's sister is Marta.", "my sister is Marta", "likes tea"),
            ("User's sister is Marta.", "my sister is Marta", "likes tea"),
            "",
        ),
        BriefObservation(3, ("the breakup hurt",), ("the breakup hurt",), ""),
        BriefObservation(
            6, ("peanut allergy",), ("peanut allergy",), "relationship sister Is your sister Maria?"
        ),
    ]
    metrics = score(f, observed)
    assert (metrics.retrieved_items, metrics.useful_items) == (5, 3)
    assert (metrics.wrong_recalls, metrics.corrections, metrics.memory_caused_corrections) == (
        2,
        1,
        1,
    )
    assert (metrics.needed, metrics.needed_found) == (2, 1)
    # Two objections to one recall event are one trigger.
    assert metrics.invasiveness_triggers == 1
    # The sister was corrected (settled), so asking about her again is redundant.
    assert (metrics.questions, metrics.redundant_questions) == (1, 1)
    assert metrics.rates() == {
        "wrong_recall_rate": 0.4,
        "redundancy_rate": 0.3333,
        "retrieval_precision": 0.6,
        "retrieval_recall_proxy": 0.5,
        # One memory-caused correction in three user turns.
        "memory_caused_correction_rate": 0.3333,
    }


def test_a_question_about_a_conflicting_fact_is_not_redundant_and_empty_rates_are_ideal() -> None:
    f = fixture(
        [
            {"say": "My sister is Marta.", "states": ["sister"]},
            {"say": "My sister is Maria.", "conflicts": ["sister"]},
            {"brief": "gift?"},
        ]
    )
    metrics = score(f, [BriefObservation(2, (), (), "Is your sister Marta or Maria?")])
    assert (metrics.questions, metrics.redundant_questions) == (1, 0)
    assert metrics.rates()["retrieval_precision"] == 1.0
    assert metrics.rates()["retrieval_recall_proxy"] == 1.0


def test_a_recall_nobody_objects_to_and_a_correction_of_unrecalled_memory_count_nothing() -> None:
    f = fixture(
        [
            {"say": "I got a breakup", "states": ["ex"]},
            {"brief": "hello"},
            {"say": "No, my sister is Maria.", "corrects": ["sister"]},
            {"say": "let's not talk about the breakup", "discomfort": ["ex"]},
        ]
    )
    metrics = score(f, [BriefObservation(1, ("weather",), ("weather",), "")])
    assert (metrics.memory_caused_corrections, metrics.wrong_recalls) == (0, 0)
    assert metrics.invasiveness_triggers == 0


def test_every_brief_needs_its_observation() -> None:
    with pytest.raises(ValueError, match="brief steps"):
        score(fixture([{"brief": "hello"}]), [])


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"say": "hi", "brief": "q"}, "exactly one of"),
        ({"say": ""}, "non-empty"),
        ({"say": "hi", "states": ["nobody"]}, "unknown facts"),
        ({"say": "hi", "mood": 1}, "unknown fields"),
        ({"say": "hi", "options": {"device_restored": True}}, "options"),
        ({"brief": "q", "options": {"now": 1}}, "options"),
        ({"say": "hi", "minute": -1}, "non-negative"),
    ],
)
def test_a_malformed_step_is_refused_naming_its_field(
    step: dict[str, object], message: str
) -> None:
    with pytest.raises(FixtureError, match=message):
        fixture([step])


def test_time_and_session_carry_over_and_needed_facts_are_useful() -> None:
    f = fixture(
        [
            {"day": 1, "minute": 5, "session": "a", "say": "hi"},
            {"brief": "q", "needed": ["peanut"], "useful": ["sister"]},
        ]
    )
    assert (f.steps[1].time_us, f.steps[1].session_id) == (f.steps[0].time_us, "a")
    assert f.steps[1].label("useful") == ("sister", "peanut")
    with pytest.raises(FixtureError, match="forward in time"):
        fixture([{"day": 1, "say": "hi"}, {"day": 0, "say": "earlier"}])
