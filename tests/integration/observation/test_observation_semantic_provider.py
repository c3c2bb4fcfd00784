"""The Observer and the Reflector against a fake OpenAI-compatible provider: a real HTTP
server on loopback, which keeps every request it was sent."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from memmesh.observation import (
    ConversationObservations,
    Observation,
    ObservationKind,
    ObservationSettings,
    ObservedTurn,
    Observer,
    Reflector,
    ThreadState,
)
from memmesh.testing.fake_provider import FakeProvider, envelope
from memmesh.testing.observation import semantic_settings

API_KEY = "sk-live-observation-test-key-0123456789"
T0 = 1_767_225_600_000_000
TURNS = (
    ObservedTurn("c1", "t1", "user", "Marco and I are redoing the kitchen, um, finally.", T0),
    ObservedTurn("c1", "t2", "assistant", "How about oak cabinets with brass handles?", T0 + 1),
    ObservedTurn("c1", "t3", "user", "Yes, let's go with that. My budget is 12k.", T0 + 2),
    ObservedTurn("c1", "t4", "user", "Should we move the sink under the window?", T0 + 3),
)
GOOD_OBSERVATIONS = {
    "observations": [
        {
            "text": "User and Marco are redoing the kitchen.",
            "kind": "fact",
            "turn_ids": ["t1"],
        },
        {
            "text": "User chose oak cabinets with brass handles; budget 12k.",
            "kind": "decision",
            "turn_ids": ["t2", "t3"],
        },
        {
            "text": "User is unsure whether to move the sink under the window.",
            "kind": "question",
            "turn_ids": ["t4"],
        },
    ]
}
# The thread of TURNS, as the ThreadStore would keep it.
THREAD = ThreadState(
    "th-1",
    title="Redoing the kitchen",
    last_decisions=("Oak cabinets with brass handles",),
    unresolved_questions=("Should we move the sink under the window?",),
    next_step="Ask Marco about moving the sink",
)
NOTES = (
    Observation("User and Marco are redoing the kitchen.", ObservationKind.FACT, ("t1",)),
    Observation(
        "User chose oak cabinets with brass handles; budget 12k.",
        ObservationKind.DECISION,
        ("t2", "t3"),
    ),
    Observation(
        "User is unsure whether to move the sink under the window.",
        ObservationKind.QUESTION,
        ("t4",),
    ),
)
BATCHES = [ConversationObservations("th-1", "c1", NOTES)]
GOOD_REFLECTION = {
    "summary": "Redoing the kitchen with Marco: oak cabinets, budget 12k. The sink is open.",
    "left_off": ["Next step: ask Marco about the sink", "Still open: moving the sink"],
}


def reply(payload: object, delay: float = 0.0) -> Any:
    return lambda body: (200, envelope(json.dumps(payload)), delay)


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    fake = FakeProvider()
    yield fake
    fake.close()


def settings(fake: FakeProvider, **overrides: Any) -> ObservationSettings:
    return semantic_settings(fake, API_KEY, **overrides)


def sent_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"])


async def test_a_good_observer_reply_is_used_with_provenance(provider: FakeProvider) -> None:
    provider.script = reply(GOOD_OBSERVATIONS)
    [result] = await Observer(settings(provider)).observe("c1", TURNS)
    assert [o.kind for o in result.observations] == [
        ObservationKind.FACT,
        ObservationKind.DECISION,
        ObservationKind.QUESTION,
    ]
    assert result.observations[1].turn_ids == ("t2", "t3")
    p = result.provenance
    assert (p.provider, p.model, p.prompt_version) == (
        "fake",
        "observer-model",
        "observation-2025.1",
    )
    assert (p.attempt_count, p.fallback_used, p.fallback_reason) == (1, False, "")
    assert len(p.input_hash) == 64 and len(p.output_hash) == 64
    [request] = provider.requests
    assert request["path"] == "/v1/chat/completions" and request["model"] == "observer-model"
    assert request["temperature"] == 0 and request["auth"] == f"Bearer {API_KEY}"


async def test_the_same_input_hashes_the_same_on_every_run(provider: FakeProvider) -> None:
    provider.script = reply(GOOD_OBSERVATIONS)
    [first] = await Observer(settings(provider)).observe("c1", TURNS)
    [again] = await Observer(settings(provider)).observe("c1", TURNS[::-1])
    assert first.provenance.input_hash == again.provenance.input_hash
    assert first.provenance.output_hash == again.provenance.output_hash


async def test_a_slow_provider_times_out_and_the_rules_answer(provider: FakeProvider) -> None:
    provider.script = reply(GOOD_OBSERVATIONS, delay=1.5)
    started = time.monotonic()
    [result] = await Observer(settings(provider, timeout_s=0.3, max_retries=1)).observe("c1", TURNS)
    # The whole batch is bounded by the timeout times the attempts.
    assert time.monotonic() - started < 0.3 * 2 + 0.5
    p = result.provenance
    assert (p.fallback_used, p.fallback_reason, p.provider) == (True, "timeout", "fake")
    decision = [o for o in result.observations if o.kind is ObservationKind.DECISION]
    assert decision[0].text == "User decided to go with oak cabinets with brass handles."


async def test_malformed_json_is_retried_with_guidance_then_falls_back(
    provider: FakeProvider,
) -> None:
    provider.script = lambda body: (200, envelope('{"observations": [ {"text": '), 0.0)
    [result] = await Observer(settings(provider, max_retries=2)).observe("c1", TURNS)
    p = result.provenance
    assert (p.fallback_used, p.fallback_reason, p.attempt_count) == (True, "invalid_output", 3)
    assert len(provider.requests) == 3
    second, third = provider.requests[1]["messages"], provider.requests[2]["messages"]
    assert second[-2] == {"role": "assistant", "content": '{"observations": [ {"text": '}
    assert "rejected" in second[-1]["content"] and "not the JSON" in second[-1]["content"]
    assert "further attempt" in third[-1]["content"]
    assert result.observations  # the rules answered


async def test_a_reply_fixed_after_guidance_is_used(provider: FakeProvider) -> None:
    invented = {
        "observations": [{"text": "User is moving to Porto.", "kind": "plan", "turn_ids": ["t1"]}]
    }
    answers = iter([invented, GOOD_OBSERVATIONS])
    provider.script = lambda body: (200, envelope(json.dumps(next(answers))), 0.0)
    [result] = await Observer(settings(provider)).observe("c1", TURNS)
    assert (result.provenance.attempt_count, result.provenance.fallback_used) == (2, False)
    assert "'porto'" in provider.requests[1]["messages"][-1]["content"]


async def test_an_empty_reply_is_degenerate_and_falls_back(provider: FakeProvider) -> None:
    provider.script = reply({"observations": []})
    [result] = await Observer(settings(provider, max_retries=0)).observe("c1", TURNS)
    assert result.provenance.fallback_reason == "degenerate_output"
    assert result.provenance.attempt_count == 1


@pytest.mark.parametrize(
    "invented",
    [
        {"text": "User and Marco are redoing the kitchen.", "kind": "fact", "turn_ids": ["t9"]},
        {"text": "User and Sarah are redoing the kitchen.", "kind": "fact", "turn_ids": ["t1"]},
        {"text": "User's budget is 15k.", "kind": "fact", "turn_ids": ["t3"]},
    ],
    ids=["unknown-turn", "unknown-name", "unknown-number"],
)
async def test_hallucinated_observations_are_rejected(
    provider: FakeProvider, invented: dict[str, object]
) -> None:
    provider.script = reply({"observations": [invented]})
    [result] = await Observer(settings(provider)).observe("c1", TURNS)
    assert (result.provenance.fallback_used, result.provenance.fallback_reason) == (
        True,
        "ungrounded_output",
    )
    texts = " ".join(o.text for o in result.observations)
    assert "Sarah" not in texts and "15k" not in texts


async def test_a_provider_error_falls_back(provider: FakeProvider) -> None:
    provider.script = lambda body: (500, '{"error": "boom"}', 0.0)
    [result] = await Observer(settings(provider, max_retries=1)).observe("c1", TURNS)
    p = result.provenance
    assert (p.fallback_reason, p.attempt_count) == ("provider_error", 2)


async def test_an_unreachable_provider_falls_back() -> None:
    fake = FakeProvider()
    fake.close()
    [result] = await Observer(settings(fake, max_retries=0)).observe("c1", TURNS)
    assert result.provenance.fallback_reason == "provider_error"


async def test_a_turn_over_the_input_budget_never_reaches_the_provider(
    provider: FakeProvider,
) -> None:
    long_turn = ObservedTurn("c1", "t9", "user", "We decided on oak. " * 800, T0 + 9)
    results = await Observer(settings(provider, max_input_tokens=1500)).observe(
        "c1", [*TURNS, long_turn]
    )
    assert [r.provenance.fallback_reason for r in results][-1] == "budget_exceeded"
    assert all(long_turn.text[:40] not in sent_text(r) for r in provider.requests)


async def test_an_over_budget_conversation_is_observed_in_chunks_of_itself(
    provider: FakeProvider,
) -> None:
    provider.script = lambda body: (200, envelope("not json"), 0.0)
    turns = [
        ObservedTurn(
            "c7", f"t{i:02d}", "user", f"Room {i} gets a new lamp and fresh paint. " * 12, T0 + i
        )
        for i in range(30)
    ]
    results = await Observer(settings(provider, max_input_tokens=1200, max_retries=0)).observe(
        "c7", turns
    )
    assert len(results) > 1 and len(provider.requests) == len(results)
    assert all(r.conversation_id == "c7" for r in results)
    cited = [o.turn_ids for r in results for o in r.observations]
    assert [ids[0] for ids in cited] == sorted(ids[0] for ids in cited)
    first_ids = {t.turn_id for t in turns if f"[{t.turn_id}]" in sent_text(provider.requests[0])}
    second_ids = {t.turn_id for t in turns if f"[{t.turn_id}]" in sent_text(provider.requests[1])}
    assert first_ids and second_ids and not first_ids & second_ids


async def test_no_credential_or_internal_only_text_reaches_the_provider(
    provider: FakeProvider,
) -> None:
    provider.script = reply(GOOD_OBSERVATIONS)
    secret_turns = (
        *TURNS,
        ObservedTurn("c1", "t5", "user", "The garage door code is 4921, don't forget.", T0 + 5),
        ObservedTurn("c1", "t6", "user", "My card number is 4111 1111 1111 1111.", T0 + 6),
        ObservedTurn("c1", "t7", "user", "Use key sk-proj-abcdefghijklmnop1234 for it.", T0 + 7),
    )
    await Observer(settings(provider)).observe("c1", secret_turns)
    provider.script = reply(GOOD_REFLECTION)
    leaky_thread = ThreadState("th-1", title="Kitchen", next_step="Text Marco the PIN 7788")
    await Reflector(settings(provider)).reflect(leaky_thread, BATCHES)
    assert len(provider.requests) >= 2
    for request in provider.requests:
        body = json.dumps({k: v for k, v in request.items() if k != "auth"})
        for secret in ("4921", "4111", "sk-proj-abcdefghijklmnop1234", "7788", API_KEY):
            assert secret not in body
    assert "[REDACTED:" in sent_text(provider.requests[0])


async def test_a_good_reflection_is_used_with_provenance(provider: FakeProvider) -> None:
    provider.script = reply(GOOD_REFLECTION)
    reflection = await Reflector(settings(provider)).reflect(THREAD, BATCHES)
    assert reflection.summary == GOOD_REFLECTION["summary"]
    assert reflection.left_off == tuple(GOOD_REFLECTION["left_off"])
    p = reflection.provenance
    assert (p.model, p.attempt_count, p.fallback_used) == ("reflector-model", 1, False)
    assert provider.requests[0]["model"] == "reflector-model"


async def test_a_reflection_copying_its_observations_falls_back(provider: FakeProvider) -> None:
    provider.script = reply(
        {"summary": " ".join(o.text for o in NOTES[:2]), "left_off": ["Ask Marco about the sink"]}
    )
    reflection = await Reflector(settings(provider, max_retries=1)).reflect(THREAD, BATCHES)
    p = reflection.provenance
    assert (p.fallback_reason, p.attempt_count) == ("degenerate_output", 2)
    assert reflection.summary == (
        "Redoing the kitchen: chose oak cabinets with brass handles; budget 12k; User and Marco "
        "are redoing the kitchen. Open: whether to move the sink under the window. "
        "Next: ask Marco about moving the sink."
    )
    assert reflection.left_off[0] == "Next step: ask Marco about moving the sink"


async def test_a_reflection_naming_someone_new_falls_back(provider: FakeProvider) -> None:
    provider.script = reply(
        {"summary": "Kitchen with Marco and Giulia.", "left_off": ["Ask Giulia about the sink"]}
    )
    reflection = await Reflector(settings(provider, max_retries=0)).reflect(THREAD, BATCHES)
    assert reflection.provenance.fallback_reason == "ungrounded_output"
    assert "Giulia" not in reflection.summary


async def test_model_ids_switched_by_environment_reach_the_provider(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMMESH_OBSERVATION_MODE", "semantic_with_fallback")
    monkeypatch.setenv("MEMMESH_OBSERVATION_BASE_URL", provider.url)
    monkeypatch.setenv("MEMMESH_OBSERVATION_OBSERVER_MODEL", "cheap-observer-2")
    monkeypatch.setenv("MEMMESH_OBSERVATION_REFLECTOR_MODEL", "careful-reflector-9")
    provider.script = reply(GOOD_OBSERVATIONS)
    [result] = await Observer(ObservationSettings()).observe("c1", TURNS)
    provider.script = reply(GOOD_REFLECTION)
    reflection = await Reflector(ObservationSettings()).reflect(THREAD, BATCHES)
    assert [r["model"] for r in provider.requests] == ["cheap-observer-2", "careful-reflector-9"]
    assert (result.provenance.model, reflection.provenance.model) == (
        "cheap-observer-2",
        "careful-reflector-9",
    )


async def test_deterministic_mode_never_calls_the_provider(provider: FakeProvider) -> None:
    [result] = await Observer(settings(provider, mode="deterministic_only")).observe("c1", TURNS)
    assert provider.requests == [] and result.provenance.provider == "rules"
