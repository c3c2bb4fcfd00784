"""The semantic path against a fake OpenAI-compatible provider: a real HTTP server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memmesh.engines.atom_extractor.adapters.rules_extractor import DeterministicExtractor
from memmesh.engines.atom_extractor.adapters.semantic_extractor import SemanticExtractor
from memmesh.engines.atom_extractor.domain.capsule import TurnInput
from memmesh.extraction.semantic.prompt import PROMPT_VERSION
from memmesh.extraction.semantic.provider import ChatCompletionsProvider, ProviderConfig
from memmesh.testing.fake_provider import FakeProvider, envelope

NOW = 1_767_225_600_000_000
TURN = TurnInput("turn-1", "s1", "user", "I'm going to visit my sister Sarah in Chicago next week.")
GOOD_FACT = {
    "text": "User has a sister named Sarah.",
    "category": "relationship",
    "type": "USER_FACT",
    "confidence": 0.9,
    "key": "relationship.sister.sarah",
    "critical_tokens": ["Sarah"],
}


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    fake = FakeProvider()
    yield fake
    fake.close()


def extractor(fake: FakeProvider, **overrides: object) -> SemanticExtractor:
    settings = {
        "name": "fake",
        "base_url": fake.url,
        "api_key": "k-test",
        "models": ("model-a",),
        "timeout_s": 0.5,
        "retries": 1,
        "max_tokens": 200,
        "turn_token_budget": 3000,
    } | overrides
    return SemanticExtractor(
        ChatCompletionsProvider(ProviderConfig(**settings)), DeterministicExtractor()
    )  # type: ignore[arg-type]


async def test_a_good_answer_is_gated_and_used_with_provenance(provider: FakeProvider) -> None:
    provider.script = lambda body: (
        200,
        envelope(json.dumps({"relevant": True, "facts": [GOOD_FACT]})),
        0.0,
    )
    result, record = await extractor(provider).extract("t", "u", TURN, NOW)
    assert [f.text for f in result.facts] == ["User has a sister named Sarah."]
    assert record is not None and not record.fallback_used and record.attempts == 1
    assert (record.provider, record.model, record.prompt_version) == (
        "fake",
        "model-a",
        PROMPT_VERSION,
    )
    assert (
        len(record.input_hash) == 64
        and len(record.output_hash) == 64
        and record.record_time_us == NOW
    )
    request = provider.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer k-test"
    assert (
        request["model"] == "model-a"
        and request["max_tokens"] == 200
        and request["temperature"] == 0
    )


async def test_a_slow_provider_times_out_and_the_rules_answer(provider: FakeProvider) -> None:
    provider.script = lambda body: (
        200,
        envelope(json.dumps({"relevant": True, "facts": [GOOD_FACT]})),
        1.5,
    )
    result, record = await extractor(provider, retries=0).extract("t", "u", TURN, NOW)
    assert record is not None and record.fallback_used and record.fallback_reason == "timeout"
    assert [f.text for f in result.facts] == [
        "User has a sister named Sarah."
    ]  # the deterministic result


async def test_malformed_json_is_retried_then_falls_back(provider: FakeProvider) -> None:
    provider.script = lambda body: (200, envelope('{"relevant": true, "facts": [ {"text": '), 0.0)
    result, record = await extractor(provider, retries=1).extract("t", "u", TURN, NOW)
    assert (
        record is not None and record.fallback_used and record.fallback_reason == "invalid_output"
    )
    assert record.attempts == 2 and len(provider.requests) == 2
    assert result.facts  # the rules still found the sister


async def test_degenerate_output_falls_back(provider: FakeProvider) -> None:
    provider.script = lambda body: (200, envelope(json.dumps({"relevant": True, "facts": []})), 0.0)
    _, record = await extractor(provider, retries=0).extract("t", "u", TURN, NOW)
    assert record is not None and record.fallback_reason == "degenerate_output"


async def test_hallucinated_facts_are_rejected_by_the_gates_and_logged(
    provider: FakeProvider,
) -> None:
    invented = {
        **GOOD_FACT,
        "text": "User works as a professional FL Studio producer.",
        "key": "identity.occupation",
        "critical_tokens": ["FL", "Studio"],
    }
    provider.script = lambda body: (
        200,
        envelope(json.dumps({"relevant": True, "facts": [invented]})),
        0.0,
    )
    result, record = await extractor(provider).extract("t", "u", TURN, NOW)
    assert (
        record is not None
        and record.fallback_used
        and record.fallback_reason == "all_proposals_rejected"
    )
    assert [r.reason_code.value for r in result.rejections] == ["not_grounded_in_source"]
    assert all("FL Studio" not in f.text for f in result.facts)


async def test_provider_errors_try_the_next_model_then_fall_back(provider: FakeProvider) -> None:
    provider.script = lambda body: (500, '{"error": "boom"}', 0.0)
    _, record = await extractor(provider, models=("model-a", "model-b"), retries=0).extract(
        "t", "u", TURN, NOW
    )
    assert [r["model"] for r in provider.requests] == ["model-a", "model-b"]
    assert (
        record is not None and record.fallback_reason == "provider_error" and record.attempts == 2
    )


async def test_a_budget_below_one_call_never_calls_the_provider(provider: FakeProvider) -> None:
    _, record = await extractor(provider, turn_token_budget=100).extract("t", "u", TURN, NOW)
    assert provider.requests == []
    assert (
        record is not None and record.fallback_reason == "budget_exceeded" and record.attempts == 0
    )


async def test_spent_tokens_count_against_the_turn_budget(provider: FakeProvider) -> None:
    provider.script = lambda body: (200, envelope("not json", tokens=2500), 0.0)
    _, record = await extractor(provider, retries=3, turn_token_budget=3000).extract(
        "t", "u", TURN, NOW
    )
    assert len(provider.requests) == 1
    assert record is not None and record.fallback_reason == "budget_exceeded"


async def test_do_not_store_turns_and_assistant_turns_never_reach_the_provider(
    provider: FakeProvider,
) -> None:
    semantic = extractor(provider)
    await semantic.extract("t", "u", TurnInput("turn-2", "s1", "user", "Don't remember this."), NOW)
    await semantic.extract(
        "t", "u", TurnInput("turn-3", "s1", "assistant", "Your sister is Sarah."), NOW
    )
    assert provider.requests == []
