"""The filter's domain: exposure, channel, DO_NOT_MENTION and pull-only rules, hit counts."""

from __future__ import annotations

import pytest

from memmesh.engines.exposure_guard.domain.filtering import (
    INTERNAL_ONLY,
    CompiledRules,
    Exposed,
    HitKey,
    filter_items,
    store_blocked_by,
)
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.rules import (
    Channel,
    RuleId,
    RuleKind,
    TargetType,
    rule_id,
)
from memmesh.engines.exposure_guard.mapping import exposure_of_wire
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.errors import InvalidInput

DNM, PULL, DNS = RuleKind.DO_NOT_MENTION, RuleKind.PULL_ONLY, RuleKind.DO_NOT_STORE
SPEAK, TEXT, INTERNAL = Exposure.SAFE_TO_SPEAK, Exposure.SAFE_TO_TEXT, Exposure.INTERNAL_ONLY


def exposed(
    item_id: str, exposure: Exposure = SPEAK, pull_only: bool = False, **fields: object
) -> Exposed:
    return Exposed(Item(item_id=item_id, **fields), exposure, pull_only)  # type: ignore[arg-type]


def run(rules: list[RuleId], items: list[Exposed], channel: Channel = Channel.VOICE, **flags: bool):  # type: ignore[no-untyped-def]
    return filter_items(
        CompiledRules.of(rules),
        items,
        channel,
        speak_text_allowed=flags.get("speak_text_allowed", False),
        user_asked=flags.get("user_asked", False),
    )


def allowed(
    rules: list[RuleId], items: list[Exposed], channel: Channel = Channel.VOICE, **flags: bool
) -> list[str]:
    return list(run(rules, items, channel, **flags).allowed_item_ids)


def test_exposure_levels_on_voice_and_text() -> None:
    items = [
        exposed("speak", SPEAK),
        exposed("text", TEXT),
        exposed("internal", INTERNAL),
        exposed("unset", exposure_of_wire(0)),
    ]
    assert allowed([], items, Channel.VOICE) == ["speak", "text"]
    assert allowed([], items, Channel.VOICE, speak_text_allowed=True) == ["speak", "text"]
    assert allowed([], items, Channel.TEXT) == ["speak", "text"]
    assert allowed([], items, Channel.TEXT, speak_text_allowed=True, user_asked=True) == [
        "speak",
        "text",
    ]


def test_safe_to_text_on_voice_passes_marked_do_not_say_and_internal_only_stays_out() -> None:
    items = [
        exposed("speak", SPEAK),
        exposed("allergy", TEXT, key="constraint.allergy", text="User is allergic to peanuts."),
        exposed("internal", INTERNAL),
        exposed("unset", exposure_of_wire(0)),
    ]
    voice = run([], items, Channel.VOICE)
    assert voice.allowed_item_ids == ("speak", "allergy")
    assert voice.do_not_say_item_ids == ("allergy",)
    assert voice.hits == ((HitKey(INTERNAL_ONLY, 0, ""), 2),)
    # Said only when the user asked or their contact preference allows it; never marked in text.
    assert run([], items, Channel.VOICE, user_asked=True).do_not_say_item_ids == ()
    assert run([], items, Channel.VOICE, speak_text_allowed=True).do_not_say_item_ids == ()
    assert run([], items, Channel.TEXT).do_not_say_item_ids == ()
    assert run([], items, Channel.TEXT).allowed_item_ids == ("speak", "allergy")


def test_do_not_mention_and_pull_only_still_hold_back_safe_to_text_on_voice() -> None:
    items = [
        exposed("a", TEXT, key="constraint.allergy", text="User is allergic to peanuts."),
        exposed("b", TEXT, key="constraint.medical.asthma", text="User has asthma."),
        exposed("c", TEXT, pull_only=True, key="finance.salary", text="User earns a lot."),
    ]
    outcome = run([RuleId(DNM, TargetType.TOPIC, "peanuts")], items, Channel.VOICE)
    assert outcome.allowed_item_ids == ("b",)
    assert outcome.do_not_say_item_ids == ("b",)
    assert outcome.do_not_mention_hits == 1


def test_an_unset_or_unknown_exposure_on_the_wire_counts_as_internal_only() -> None:
    assert exposure_of_wire(0) is Exposure.INTERNAL_ONLY
    assert [exposure_of_wire(n) for n in (1, 2, 3)] == [SPEAK, TEXT, INTERNAL]
    # The validator refuses an unknown number; were one to get past it, it never travels.
    assert exposure_of_wire(7) is Exposure.INTERNAL_ONLY


def test_allowed_ids_keep_request_order() -> None:
    items = [exposed(f"i{n}") for n in (5, 2, 9, 1)]
    assert allowed([], items) == ["i5", "i2", "i9", "i1"]


def test_key_rule_covers_the_key_and_keys_below_it_by_dotted_segments() -> None:
    rules = [RuleId(DNM, TargetType.KEY, "relationship.sister")]
    items = [
        exposed("exact", key="relationship.sister"),
        exposed("below", key="relationship.sister.name"),
        exposed("upper-case", key="Relationship.Sister"),
        exposed("sibling-word", key="relationship.sisterhood"),
        exposed("parent", key="relationship"),
        exposed("other", key="relationship.brother"),
    ]
    assert allowed(rules, items) == ["sibling-word", "parent", "other"]


def test_topic_rule_matches_topics_and_whole_words_with_plurals_and_possessives() -> None:
    rules = [RuleId(DNM, TargetType.TOPIC, "sister")]
    items = [
        exposed("topic", topics=("Sister",)),
        exposed("word", text="User has a sister named Sarah."),
        exposed("plural", text="User has two sisters."),
        exposed("possessive", text="User's SISTER'S wedding is in June."),
        exposed("typographic", text="User\u2019s sister\u2019s dog."),
        exposed("inside-a-word", text="User founded a sisterhood."),
        exposed("unrelated", text="User has a brother.", topics=("family",)),
    ]
    assert allowed(rules, items) == ["inside-a-word", "unrelated"]


@pytest.mark.parametrize(
    ("topic", "text"),
    [
        ("party", "User loves parties."),
        ("parties", "User loves a party."),
        ("box", "User collects boxes."),
        ("salary", "User's salaries are private."),
        ("glasses", "User wears glass frames."),
    ],
)
def test_topic_stems_meet_in_both_directions(topic: str, text: str) -> None:
    assert allowed([RuleId(DNM, TargetType.TOPIC, topic)], [exposed("a", text=text)]) == []


def test_multi_word_topic_matches_only_consecutive_words_within_one_field() -> None:
    rules = [rule_id(DNM, TargetType.TOPIC, "  Work   Project ")]
    items = [
        exposed("phrase", text="User leads the work projects."),
        exposed("apart", text="User has work and a project."),
        exposed("across-fields", text="User likes work", topics=("project",)),
        exposed("in-topic", topics=("work project",)),
    ]
    assert allowed(rules, items) == ["apart", "across-fields"]


def test_thread_work_order_and_atom_rules() -> None:
    rules = [
        RuleId(DNM, TargetType.THREAD, "th-1"),
        RuleId(DNM, TargetType.WORK_ORDER, "wo-7"),
        RuleId(DNM, TargetType.ATOM, "atom-3"),
    ]
    items = [
        exposed("a", thread_id="th-1"),
        exposed("b", work_order_id="wo-7"),
        exposed("atom-3"),
        exposed("d", atom_id="atom-3"),
        exposed("e", thread_id="th-2", work_order_id="wo-8", atom_id="atom-4"),
    ]
    assert allowed(rules, items) == ["e"]


def test_do_not_mention_holds_even_when_the_user_asks() -> None:
    rules = [RuleId(DNM, TargetType.TOPIC, "sister")]
    items = [exposed("a", text="A sister.")]
    assert allowed(rules, items, Channel.TEXT, speak_text_allowed=True, user_asked=True) == []


def test_pull_only_flag_and_rules_pass_only_when_the_user_asks() -> None:
    rules = [
        RuleId(PULL, TargetType.KEY, "preference.music"),
        RuleId(PULL, TargetType.TOPIC, "jazz"),
    ]
    items = [
        exposed("flag", pull_only=True),
        exposed("key", key="preference.music.genre"),
        exposed("topic", text="User loves jazz."),
        exposed("free"),
    ]
    assert allowed(rules, items) == ["free"]
    assert allowed(rules, items, user_asked=True) == ["flag", "key", "topic", "free"]


def test_do_not_store_rules_do_not_filter() -> None:
    assert allowed([RuleId(DNS, TargetType.TOPIC, "sister")], [exposed("a", text="A sister.")]) == [
        "a"
    ]


def test_hits_count_every_reason_per_rule_in_sorted_order() -> None:
    rules = [
        RuleId(DNM, TargetType.TOPIC, "sister"),
        RuleId(DNM, TargetType.KEY, "relationship"),
        RuleId(PULL, TargetType.THREAD, "th-1"),
    ]
    items = [
        exposed("a", INTERNAL, key="relationship.sister", text="A sister."),
        exposed("b", TEXT, thread_id="th-1"),
        exposed("c", SPEAK, pull_only=True, text="sisters"),
        exposed("d", SPEAK),
    ]
    outcome = run(rules, items)
    # b (SAFE_TO_TEXT on voice) is held back by its thread's pull-only rule, not the channel.
    assert outcome.allowed_item_ids == ("d",)
    assert outcome.do_not_mention_hits == 2
    assert outcome.hits == (
        (HitKey("DO_NOT_MENTION", TargetType.KEY, "relationship"), 1),
        (HitKey("DO_NOT_MENTION", TargetType.TOPIC, "sister"), 2),
        (HitKey(INTERNAL_ONLY, 0, ""), 1),
        (HitKey("PULL_ONLY", 0, ""), 1),
        (HitKey("PULL_ONLY", TargetType.THREAD, "th-1"), 1),
    )


def test_no_rules_and_no_items() -> None:
    outcome = run([], [])
    assert (outcome.allowed_item_ids, outcome.hits, outcome.do_not_mention_hits) == ((), (), 0)


def test_do_not_store_by_key_topic_thread_and_the_first_rule_is_named() -> None:
    rules = CompiledRules.of(
        [
            RuleId(DNS, TargetType.TOPIC, "health"),
            RuleId(DNS, TargetType.KEY, "identity.health"),
            RuleId(DNS, TargetType.THREAD, "th-9"),
            RuleId(DNM, TargetType.KEY, "preference"),
        ]
    )
    assert store_blocked_by(
        rules, Item("", key="identity.health.condition", topics=("health",))
    ) == RuleId(DNS, TargetType.KEY, "identity.health")
    assert store_blocked_by(rules, Item("", key="x.y", text="User's health is good.")) == RuleId(
        DNS, TargetType.TOPIC, "health"
    )
    assert store_blocked_by(rules, Item("", key="x.y", thread_id="th-9")) == RuleId(
        DNS, TargetType.THREAD, "th-9"
    )
    assert store_blocked_by(rules, Item("", key="preference.food")) is None


@pytest.mark.parametrize(
    ("target_type", "raw", "stored"),
    [
        (TargetType.KEY, " Relationship.Sister ", "relationship.sister"),
        (TargetType.TOPIC, "  Work\tProject ", "work project"),
        (TargetType.THREAD, " Th-1 ", "Th-1"),
    ],
)
def test_targets_are_normalised(target_type: TargetType, raw: str, stored: str) -> None:
    assert rule_id(DNM, target_type, raw).target == stored


@pytest.mark.parametrize(
    ("target_type", "raw"),
    [
        (TargetType.KEY, "a..b"),
        (TargetType.KEY, "a b"),
        (TargetType.KEY, "."),
        (TargetType.TOPIC, "!!!"),
        (TargetType.THREAD, "two words"),
        (TargetType.ATOM, "   "),
    ],
)
def test_unusable_targets_are_invalid_input_naming_the_field(
    target_type: TargetType, raw: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        rule_id(DNM, target_type, raw, "rule.target")
    assert [v.field for v in raised.value.violations] == ["rule.target"]
