"""A DO_NOT_MENTION rule covers its subject: the names of the atoms its target matches."""

from __future__ import annotations

import pytest

from memmesh.engines.exposure_guard.domain.filtering import CompiledRules, Exposed, filter_items
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.rules import Channel, RuleId, RuleKind, TargetType
from memmesh.engines.exposure_guard.domain.subject import (
    MAX_TERMS,
    SubjectAtom,
    graph_node_ids,
    merged_terms,
    names_in,
    new_subject_names,
    normal_term,
    subject_names,
)
from memmesh.policy.sensitivity import Exposure

BROTHER = RuleId(RuleKind.DO_NOT_MENTION, TargetType.TOPIC, "brother")
BROTHER_KEY = RuleId(RuleKind.DO_NOT_MENTION, TargetType.KEY, "relationship.brother")
ATOMS = [
    SubjectAtom(
        "a1", "relationship.brother.kwame", "User has a brother named Kwame.", (), ("Kwame",)
    ),
    SubjectAtom("a2", "relationship.sister.ama", "User has a sister named Ama.", (), ("Ama",)),
    SubjectAtom("a3", "location.home", "User lives in Boston.", (), ("Boston",)),
]


def test_names_leave_out_how_atoms_are_phrased_and_openers() -> None:
    assert names_in("User has a brother named Kwame.") == ["Kwame"]
    assert names_in("I met Kwame Mensah in Accra. The party was fun.") == ["Kwame Mensah", "Accra"]
    assert names_in("Kwame, Ama and I went out.") == ["Kwame", "Ama"]
    assert names_in("", ("Rex",)) == ["Rex"]


@pytest.mark.parametrize("rule", [BROTHER, BROTHER_KEY])
def test_a_rule_on_a_relation_names_the_person_its_atoms_name(rule: RuleId) -> None:
    assert subject_names(rule, ATOMS) == ["Kwame"]


def test_terms_are_folded_without_possessives_each_once_and_bounded() -> None:
    assert merged_terms(["Kwame's", "KWAME", " kwame  mensah "], ["the", "I"]) == (
        "kwame",
        "kwame mensah",
    )
    assert normal_term("x") == ""
    assert len(merged_terms([f"name{i}" for i in range(200)])) == MAX_TERMS


def test_graph_nodes_are_the_names_and_a_topic_target() -> None:
    assert graph_node_ids(BROTHER, ["Kwame Mensah"]) == ["entity:kwame-mensah", "entity:brother"]
    assert graph_node_ids(BROTHER_KEY, ["Kwame"]) == ["entity:kwame"]


def _texts(allowed: tuple[str, ...], items: list[Exposed]) -> list[str]:
    return [e.item.text for e in items if e.item.item_id in allowed]


def test_terms_hold_back_every_item_naming_the_subject_whole_words_any_case() -> None:
    rules = CompiledRules.of([BROTHER], {BROTHER: ("kwame",)})
    texts = [
        "I need to buy Kwame a present",
        "Buy KWAME'S birthday present",
        "The Kwames are coming",
        "Kwameson is a different word",
        "Lisbon trip in May",
    ]
    items = [Exposed(Item(f"e{i}", text=t), Exposure.SAFE_TO_SPEAK) for i, t in enumerate(texts)]
    outcome = filter_items(rules, items, Channel.VOICE, speak_text_allowed=False, user_asked=True)
    assert _texts(outcome.allowed_item_ids, items) == [
        "Kwameson is a different word",
        "Lisbon trip in May",
    ]
    assert outcome.do_not_mention_hits == 3
    # Hits count under the rule itself.
    assert [(k.rule, k.target, n) for k, n in outcome.hits] == [("DO_NOT_MENTION", "brother", 3)]


def test_terms_widen_do_not_mention_only() -> None:
    pull = RuleId(RuleKind.PULL_ONLY, TargetType.TOPIC, "brother")
    rules = CompiledRules.of([pull], {pull: ("kwame",)})
    items = [Exposed(Item("e0", text="Kwame called"), Exposure.SAFE_TO_SPEAK)]
    outcome = filter_items(rules, items, Channel.VOICE, speak_text_allowed=False, user_asked=False)
    assert outcome.allowed_item_ids == ("e0",)


def test_new_names_come_from_atoms_the_target_matches_not_from_terms() -> None:
    rules = CompiledRules.of([BROTHER], {BROTHER: ("kwame",)})
    items = [
        Item("a0", text="User's brother is called Kofi.", atom_id="x1"),
        # Matched only through a term: its other names are not the subject's.
        Item("a1", text="User's friend Ama knows Kwame.", atom_id="x2"),
        # Not an atom.
        Item("e0", text="My brother Yaw called."),
    ]
    assert new_subject_names(rules, items) == {BROTHER: ("kofi",)}
    assert new_subject_names(CompiledRules.of([BROTHER], {BROTHER: ("kofi",)}), items[:1]) == {}
