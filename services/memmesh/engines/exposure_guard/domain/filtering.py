"""The filter (seed 001 §2.11.11, Q16): what may leave on a channel, and which rules held what back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

from memmesh.engines.exposure_guard.domain.matching import Item, RuleMatcher
from memmesh.engines.exposure_guard.domain.rules import Channel, RuleId, RuleKind
from memmesh.policy.sensitivity import Exposure

# Hit name besides the rule kinds: the exposure level.
INTERNAL_ONLY = "INTERNAL_ONLY"


class Exposed(NamedTuple):
    """An item with what the filter needs beyond the rule targets (a named tuple, as Item)."""

    item: Item
    exposure: Exposure
    pull_only: bool = False


class HitKey(NamedTuple):
    """What held items back: a rule (kind, target type, target) or the exposure level
    (INTERNAL_ONLY, 0, ''). The atom's own pull-only flag is (PULL_ONLY, 0, '')."""

    rule: str
    target_type: int
    target: str


@dataclass(frozen=True)
class FilterOutcome:
    allowed_item_ids: tuple[str, ...]
    hits: tuple[tuple[HitKey, int], ...]
    do_not_mention_hits: int
    # Allowed items to use but not say (SAFE_TO_TEXT on the voice channel), in request order.
    do_not_say_item_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledRules:
    """A user's rules, compiled once per rule set and reused by every call."""

    do_not_mention: RuleMatcher
    pull_only: RuleMatcher
    do_not_store: RuleMatcher
    # Every rule that can hold back a filtered item, for the one fast check per item.
    surfacing: RuleMatcher
    # DO_NOT_MENTION rules on their own targets only (no subject terms): what an atom must
    # match for its names to become terms of the rule.
    mention_targets: RuleMatcher = field(default_factory=RuleMatcher)
    # The subject terms of each DO_NOT_MENTION rule.
    terms: Mapping[RuleId, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, rules: Iterable[RuleId], terms: Mapping[RuleId, tuple[str, ...]] | None = None
    ) -> CompiledRules:
        """Compile rule ids of every kind; `terms` are the subject terms of DO_NOT_MENTION
        rules (they widen those rules only)."""
        grouped: dict[RuleKind, list[RuleId]] = {kind: [] for kind in RuleKind}
        for rule in rules:
            grouped[rule.kind].append(rule)
        mention = grouped[RuleKind.DO_NOT_MENTION]
        mention_terms = {rule: tuple((terms or {}).get(rule, ())) for rule in mention}
        return cls(
            RuleMatcher.of(mention, mention_terms),
            RuleMatcher.of(grouped[RuleKind.PULL_ONLY]),
            RuleMatcher.of(grouped[RuleKind.DO_NOT_STORE]),
            RuleMatcher.of(mention + grouped[RuleKind.PULL_ONLY], mention_terms),
            RuleMatcher.of(mention),
            mention_terms,
        )


_ITEM = attrgetter("item")
_FLAG_PULL_ONLY = HitKey(RuleKind.PULL_ONLY.value, 0, "")
_HIT_INTERNAL = HitKey(INTERNAL_ONLY, 0, "")


def _hit_key(rule: RuleId) -> HitKey:
    return HitKey(rule.kind.value, int(rule.target_type), rule.target)


def may_travel(exposure: Exposure, channel: Channel, speak_text_allowed: bool) -> bool:
    """Whether text that is said or written as it is (the recall summary) may go out:
    INTERNAL_ONLY never; SAFE_TO_TEXT not spoken unless the user's contact preference
    allows it."""
    if exposure is Exposure.SAFE_TO_SPEAK:
        return True
    if exposure is Exposure.SAFE_TO_TEXT:
        return channel is Channel.TEXT or speak_text_allowed
    return False


def filter_items(
    rules: CompiledRules,
    items: Sequence[Exposed],
    channel: Channel,
    *,
    speak_text_allowed: bool,
    user_asked: bool,
) -> FilterOutcome:
    """Allowed ids in request order; every reason that held an item back is counted.

    Seed 001 §2.11.11: INTERNAL_ONLY never enters a bundle; SAFE_TO_TEXT must not be
    *spoken* unless the user asks or their contact preference allows it, so on the voice
    channel it passes marked do-not-say (the assistant honours it silently) instead of
    being dropped: a voice answer that forgets an allergy is worse than one that does
    not mention it. DO_NOT_MENTION and pull-only still hold items back whatever the mark."""
    surfacing = rules.surfacing
    plain = list(map(_ITEM, items)) if not surfacing.empty else []
    topic_hits = surfacing.topic_matches(plain) if surfacing.probes else {}
    touched = surfacing.touched_by_ids(plain) if plain else set()
    touched.update(topic_hits)
    # An explicit ask lets SAFE_TO_TEXT be said, as the contact preference does.
    text_passes = channel is Channel.TEXT or speak_text_allowed or user_asked
    pull_blocks = not user_asked
    speak, text = Exposure.SAFE_TO_SPEAK, Exposure.SAFE_TO_TEXT
    allowed: list[str] = []
    unsaid: list[str] = []
    rule_counts: dict[HitKey, int] = {}
    internal = flagged = suppressed = 0
    for index, exposed in enumerate(items):
        exposure = exposed.exposure
        blocked = do_not_say = False
        if exposure is not speak:
            if exposure is not text:
                internal += 1
                blocked = True
            else:
                do_not_say = not text_passes
        if pull_blocks and exposed.pull_only:
            flagged += 1
            blocked = True
        if index in touched:
            matched = sorted(surfacing.id_matches(exposed.item) | topic_hits.get(index, set()))
            mentioned = [rule for rule in matched if rule.kind is RuleKind.DO_NOT_MENTION]
            held = mentioned + [
                rule for rule in matched if pull_blocks and rule.kind is RuleKind.PULL_ONLY
            ]
            if mentioned:
                suppressed += 1
            for rule in held:
                key = _hit_key(rule)
                rule_counts[key] = rule_counts.get(key, 0) + 1
            blocked = blocked or bool(held)
        if not blocked:
            allowed.append(exposed.item.item_id)
            if do_not_say:
                unsaid.append(exposed.item.item_id)
    for key, count in ((_HIT_INTERNAL, internal), (_FLAG_PULL_ONLY, flagged)):
        if count:
            rule_counts[key] = count
    return FilterOutcome(
        tuple(allowed), tuple(sorted(rule_counts.items())), suppressed, tuple(unsaid)
    )


def store_blocked_by(rules: CompiledRules, item: Item) -> RuleId | None:
    """The first do-not-store rule (by kind, target type, target) that forbids storing the item."""
    found = rules.do_not_store.matches([item])[0]
    return found[0] if found else None
