"""Filter over 1,000 atoms in-process (seed 001 Q16: sub-millisecond on 1k atoms)."""

from __future__ import annotations

import random
import time

from memmesh.bench.stats import percentile
from memmesh.engines.exposure_guard.domain.filtering import CompiledRules, Exposed, filter_items
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.rules import (
    Channel,
    RuleId,
    RuleKind,
    TargetType,
)
from memmesh.policy.sensitivity import Exposure

_SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ter",
    "san",
    "vo",
    "ri",
    "da",
    "pel",
    "nu",
    "gor",
    "fi",
    "ba",
    "ten",
    "sho",
)
# Words the rule set targets; each item mentions one only now and then, as real atoms do.
_SENSITIVE = ("salary", "mortgage", "doctor", "holidays", "team", "morning", "sister", "jazz")
_KEY_ROOTS = ("preference", "relationship", "identity", "constraint")
_EXPOSURES = (
    (Exposure.SAFE_TO_SPEAK,) * 6 + (Exposure.SAFE_TO_TEXT,) * 3 + (Exposure.INTERNAL_ONLY,)
)


def _vocabulary(rng: random.Random, size: int = 600) -> list[str]:
    # Words of 2 to 8 letters, about as long as English words in stored facts.
    return sorted({"".join(rng.choices(_SYLLABLES, k=rng.randint(1, 3))) for _ in range(size)})


def bench_items(count: int = 1000, seed: int = 7, mention_share: float = 0.05) -> list[Exposed]:
    """Seeded atoms: dotted keys, two topics, texts of 5-11 words (about 45 characters, like
    "User has a sister named Sarah."; a rule-targeted word in about mention_share of them),
    threads on a third, work orders on a seventh, some pull-only."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng)
    items = []
    for n in range(count):
        words = rng.sample(vocabulary, rng.randint(4, 10))
        if rng.random() < mention_share:
            words[rng.randrange(len(words))] = rng.choice(_SENSITIVE)
        topics = [rng.choice(vocabulary), rng.choice(vocabulary)]
        if rng.random() < mention_share:
            topics[0] = rng.choice(_SENSITIVE)
        leaf = rng.choice(_SENSITIVE) if rng.random() < mention_share else rng.choice(vocabulary)
        item = Item(
            item_id=f"atom-{n:05d}",
            key=f"{rng.choice(_KEY_ROOTS)}.{leaf}.{rng.choice(vocabulary)}",
            topics=tuple(topics),
            text="User " + " ".join(words) + ".",
            thread_id=f"thread-{rng.randint(0, 40)}" if n % 3 == 0 else "",
            work_order_id=f"wo-{rng.randint(0, 40)}" if n % 7 == 0 else "",
            atom_id=f"atom-{n:05d}",
        )
        items.append(Exposed(item, rng.choice(_EXPOSURES), pull_only=n % 11 == 0))
    return items


def bench_rules() -> list[RuleId]:
    """A heavy user's rule set: keys, topics (one a phrase), threads, work orders, atoms."""
    dnm, pull = RuleKind.DO_NOT_MENTION, RuleKind.PULL_ONLY
    return [
        RuleId(dnm, TargetType.KEY, "relationship.sister"),
        RuleId(dnm, TargetType.KEY, "constraint.allergy"),
        RuleId(pull, TargetType.KEY, "preference.jazz"),
        RuleId(dnm, TargetType.TOPIC, "salary"),
        RuleId(dnm, TargetType.TOPIC, "mortgages"),
        RuleId(dnm, TargetType.TOPIC, "doctor"),
        RuleId(pull, TargetType.TOPIC, "holiday"),
        RuleId(dnm, TargetType.TOPIC, "team morning"),
        RuleId(dnm, TargetType.THREAD, "thread-3"),
        RuleId(pull, TargetType.THREAD, "thread-9"),
        RuleId(dnm, TargetType.WORK_ORDER, "wo-5"),
        RuleId(dnm, TargetType.ATOM, "atom-00042"),
        RuleId(pull, TargetType.ATOM, "atom-00100"),
    ]


def bench_terms(
    rules: list[RuleId], per_rule: int, seed: int = 11
) -> dict[RuleId, tuple[str, ...]]:
    """Subject terms for each DO_NOT_MENTION key and topic rule, as a rule on a relation
    gathers them from its atoms and graph: names of 2 to 3 syllables and an "a" ending,
    which the items' words never are, so the figure is the cost of looking for them (the
    items that do name a subject cost what a topic hit costs)."""
    rng = random.Random(seed)
    return {
        rule: tuple(
            sorted(
                "".join(rng.choices(_SYLLABLES, k=rng.randint(2, 3))) + "a" for _ in range(per_rule)
            )
        )
        for rule in rules
        if rule.kind is RuleKind.DO_NOT_MENTION
        and rule.target_type in (TargetType.KEY, TargetType.TOPIC)
    }


def bench_filter(
    runs: int = 1000, mention_share: float = 0.05, subject_terms: int = 0
) -> dict[str, float]:
    """Time the domain filter over 1,000 items `runs` times; p50/p99 in milliseconds. With
    subject_terms, each DO_NOT_MENTION key and topic rule also covers that many names."""
    ids = bench_rules()
    terms = bench_terms(ids, subject_terms) if subject_terms else None
    items, rules = bench_items(mention_share=mention_share), CompiledRules.of(ids, terms)
    for _ in range(20):  # warm-up
        filter_items(rules, items, Channel.VOICE, speak_text_allowed=False, user_asked=False)
    outcome = filter_items(rules, items, Channel.VOICE, speak_text_allowed=False, user_asked=False)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        filter_items(rules, items, Channel.VOICE, speak_text_allowed=False, user_asked=False)
        samples.append((time.perf_counter() - started) * 1000)
    return {
        "items": float(len(items)),
        "allowed": float(len(outcome.allowed_item_ids)),
        "do_not_mention_hits": float(outcome.do_not_mention_hits),
        "p50_ms": round(percentile(samples, 0.50), 4),
        "p99_ms": round(percentile(samples, 0.99), 4),
    }


if __name__ == "__main__":
    print(bench_filter())
    print("with 8 subject terms a rule:", bench_filter(subject_terms=8))
