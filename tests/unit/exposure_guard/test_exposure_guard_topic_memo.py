"""A compiled rule set remembers topic matches of texts it has seen: a reused rule set answers
exactly as a fresh one, on the first call, on repeats, on new texts and after its memory
starts over."""

from __future__ import annotations

import random

import pytest

from memmesh.bench.exposure_filter import bench_items, bench_rules
from memmesh.engines.exposure_guard.domain import matching
from memmesh.engines.exposure_guard.domain.filtering import CompiledRules, Exposed, filter_items
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.rules import Channel
from memmesh.policy.sensitivity import Exposure


def outcome(rules: CompiledRules, items: list[Exposed], user_asked: bool = False):  # type: ignore[no-untyped-def]
    return filter_items(
        rules, items, Channel.VOICE, speak_text_allowed=False, user_asked=user_asked
    )


def fresh(items: list[Exposed], user_asked: bool = False):  # type: ignore[no-untyped-def]
    return outcome(CompiledRules.of(bench_rules()), items, user_asked)


def test_a_reused_rule_set_answers_as_a_fresh_one_across_changing_batches() -> None:
    pool = bench_items(count=600, mention_share=0.2)
    reused = CompiledRules.of(bench_rules())
    rng = random.Random(3)
    for _ in range(30):
        batch = rng.sample(pool, rng.randint(1, 80))
        asked = rng.random() < 0.5
        assert outcome(reused, batch, asked) == fresh(batch, asked)


def test_the_same_text_matches_the_same_wherever_it_appears() -> None:
    rules = CompiledRules.of(bench_rules())
    mentions = Exposed(
        Item("a", text="My salary went up.", topics=("work",)), Exposure.SAFE_TO_SPEAK
    )
    plain = Exposed(Item("b", text="I like tea.", topics=("salary",)), Exposure.SAFE_TO_SPEAK)
    again = Exposed(Item("c", text="My salary went up.", topics=("tea",)), Exposure.SAFE_TO_SPEAK)
    assert outcome(rules, [mentions, plain]).allowed_item_ids == ()
    assert outcome(rules, [plain, again, mentions]).allowed_item_ids == ()
    assert outcome(
        rules, [Exposed(Item("d", text="I like tea."), Exposure.SAFE_TO_SPEAK)]
    ).allowed_item_ids == ("d",)


def test_answers_stay_exact_when_the_memory_starts_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matching, "MEMO_ENTRIES", 16)
    pool = bench_items(count=200, mention_share=0.3)
    reused = CompiledRules.of(bench_rules())
    rng = random.Random(5)
    for size in (1, 10, 15, 16, 17, 40, 200):
        batch = rng.sample(pool, size)
        assert outcome(reused, batch) == fresh(batch)
        assert outcome(reused, batch) == fresh(batch)
