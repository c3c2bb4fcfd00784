"""When a failed attempt is retried and when the rules answer instead."""

from __future__ import annotations

import pytest

from memmesh.observation import FallbackReason
from memmesh.observation.guardrails import Decision, decide, needs_guidance
from memmesh.observation.prompts import with_guidance

CORRECTABLE = [
    FallbackReason.INVALID_OUTPUT,
    FallbackReason.DEGENERATE_OUTPUT,
    FallbackReason.UNGROUNDED_OUTPUT,
]


@pytest.mark.parametrize(
    "failure", [*CORRECTABLE, FallbackReason.TIMEOUT, FallbackReason.PROVIDER_ERROR]
)
def test_a_failure_is_retried_while_attempts_and_time_are_left(failure: FallbackReason) -> None:
    assert decide(failure, attempts=1, max_attempts=3, remaining_s=5.0) is Decision.RETRY


@pytest.mark.parametrize("failure", list(FallbackReason))
def test_the_last_attempt_falls_back(failure: FallbackReason) -> None:
    assert decide(failure, attempts=3, max_attempts=3, remaining_s=5.0) is Decision.FALLBACK


def test_no_time_left_falls_back() -> None:
    assert decide(FallbackReason.INVALID_OUTPUT, 1, 3, remaining_s=0.0) is Decision.FALLBACK


def test_an_exceeded_budget_is_never_retried() -> None:
    assert decide(FallbackReason.BUDGET_EXCEEDED, 1, 5, remaining_s=5.0) is Decision.FALLBACK


def test_only_replies_the_model_can_fix_carry_guidance() -> None:
    assert [f for f in FallbackReason if needs_guidance(f)] == CORRECTABLE


def test_guidance_names_the_problem_and_grows_firmer() -> None:
    first = [{"role": "system", "content": "rules"}, {"role": "user", "content": "turns"}]
    second_try = with_guidance(first, "{bad", ["observations.0 cites turn 't9'"], attempt=1)
    third_try = with_guidance(first, "{bad", ["observations.0 cites turn 't9'"], attempt=2)
    assert second_try[:2] == first and second_try[2] == {"role": "assistant", "content": "{bad"}
    assert "'t9'" in second_try[3]["content"] and "further attempt" not in second_try[3]["content"]
    assert "further attempt" in third_try[3]["content"]
