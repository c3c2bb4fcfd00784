"""A DO_NOT_MENTION rule covers its subject: the names of the atoms its target matches."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from memmesh.engines.exposure_guard.domain.filtering import CompiledRules, Exposed, filter_items
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.rules import (
    Channel,
    Rule,
    RuleId,
    RuleKind,
    TargetType,
)
from memmesh.engines.exposure_guard.domain.subject import (
    MAX_TERMS,
    SubjectAtom,
    aliases,
    graph_node_ids,
    merged_terms,
    names_in,
    new_subject_names,
    normal_term,
    said_names,
    subject_names,
)
from memmesh.engines.exposure_guard.use_cases import ExposureGuardService
from memmesh.errors import DependencyFailed
from memmesh.policy.sensitivity import Exposure
from memmesh.storage.cache import MemoryCache

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
        Item("a0", "relationship.brother", text="User's brother is called Kofi.", atom_id="x1"),
        # Names the subject without being about it: its names are not the subject's.
        Item("a2", "location.home", text="User's brother Yaw lives in Boston.", atom_id="x3"),
        # Matched only through a term: its other names are not the subject's.
        Item("a1", text="User's friend Ama knows Kwame.", atom_id="x2"),
        # Not an atom.
        Item("e0", text="My brother Yaw called."),
    ]
    assert new_subject_names(rules, items) == {BROTHER: ("kofi",)}
    assert new_subject_names(CompiledRules.of([BROTHER], {BROTHER: ("kofi",)}), items[:1]) == {}


class Store:
    """Rules in a dict, with the RuleStore port's semantics."""

    def __init__(self) -> None:
        self.rules: dict[RuleId, Rule] = {}

    async def list_rules(self, tenant_id: str, user_id: str) -> list[Rule]:
        return sorted(self.rules.values(), key=lambda r: r.id)

    async def get_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> Rule | None:
        return self.rules.get(rule_id)

    async def add_rule(self, tenant_id: str, user_id: str, rule: Rule) -> bool:
        if rule.id in self.rules:
            return False
        self.rules[rule.id] = rule
        return True

    async def remove_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> bool:
        return self.rules.pop(rule_id, None) is not None

    async def set_terms(
        self, tenant_id: str, user_id: str, rule_id: RuleId, terms: tuple[str, ...]
    ) -> bool:
        if rule_id not in self.rules:
            return False
        self.rules[rule_id] = replace(self.rules[rule_id], terms=terms)
        return True

    async def close(self) -> None:
        return None


class Ledger:
    async def record(self, tenant_id: str, user_id: str, event: object) -> None:
        return None


@dataclass
class Capsule:
    atoms: list[SubjectAtom] = field(default_factory=lambda: list(ATOMS))
    down: bool = False

    async def atoms_of(self, tenant_id: str, user_id: str) -> list[SubjectAtom]:
        if self.down:
            raise DependencyFailed("atom_extractor", "UNAVAILABLE")
        return self.atoms


@dataclass
class Graph:
    neighbours: dict[str, list[str]] = field(default_factory=dict)
    asked: list[list[str]] = field(default_factory=list)

    async def linked_labels(self, tenant_id: str, user_id: str, node_ids: list[str]) -> list[str]:
        self.asked.append(node_ids)
        return [label for node in node_ids for label in self.neighbours.get(node, [])]


class CapsuleAtoms:
    def __init__(self, capsule: Capsule) -> None:
        self._capsule = capsule

    async def atoms(self, tenant_id: str, user_id: str) -> list[SubjectAtom]:
        return await self._capsule.atoms_of(tenant_id, user_id)


def service(capsule: Capsule, graph: Graph) -> tuple[ExposureGuardService, Store]:
    store = Store()
    guard = ExposureGuardService(
        store, Ledger(), MemoryCache(), atoms=CapsuleAtoms(capsule), graph=graph
    )
    return guard, store


def excerpts(*texts: str) -> list[Exposed]:
    return [Exposed(Item(f"e{i}", text=t), Exposure.SAFE_TO_SPEAK) for i, t in enumerate(texts)]


async def test_setting_a_rule_stores_the_names_of_its_atoms_and_linked_nodes() -> None:
    graph = Graph({"entity:kwame": ["Kwame Mensah"]})
    guard, store = service(Capsule(), graph)
    rule, created = await guard.set_rule("t", "u", BROTHER, "", 1)
    assert created and rule.terms == ("kwame", "kwame mensah")
    assert store.rules[BROTHER].terms == rule.terms
    assert graph.asked == [["entity:kwame", "entity:brother"]]
    outcome = await guard.filter(
        "t",
        "u",
        excerpts("Buy Kwame a present", "Lisbon in May"),
        Channel.VOICE,
        speak_text_allowed=False,
        user_asked=False,
    )
    assert outcome.allowed_item_ids == ("e1",)


async def test_a_subject_that_cannot_be_read_leaves_the_rule_on_its_target_and_fails() -> None:
    capsule = Capsule(down=True)
    guard, store = service(capsule, Graph())
    with pytest.raises(DependencyFailed):
        await guard.set_rule("t", "u", BROTHER, "", 1)
    assert store.rules[BROTHER].terms == ()
    # In force on its target already; a retry completes it.
    held = await guard.filter(
        "t",
        "u",
        excerpts("my brother called"),
        Channel.VOICE,
        speak_text_allowed=False,
        user_asked=False,
    )
    assert held.allowed_item_ids == ()
    capsule.down = False
    rule, created = await guard.set_rule("t", "u", BROTHER, "", 2)
    assert not created and rule.terms == ("kwame",)


async def test_other_kinds_of_rule_read_no_subject() -> None:
    graph = Graph()
    guard, store = service(Capsule(down=True), graph)
    pull = RuleId(RuleKind.PULL_ONLY, TargetType.TOPIC, "brother")
    rule, _ = await guard.set_rule("t", "u", pull, "", 1)
    assert rule.terms == () and graph.asked == []


async def test_filtering_a_new_atom_on_the_subject_grows_the_rule_and_holds_its_name() -> None:
    guard, store = service(Capsule(atoms=[]), Graph())
    await guard.set_rule("t", "u", BROTHER, "", 1)
    items = [
        Exposed(
            Item(
                "a0", "relationship.brother.kofi", (), "User has a brother named Kofi.", atom_id="x"
            ),
            Exposure.SAFE_TO_SPEAK,
        ),
        *excerpts("Kofi called yesterday"),
    ]
    outcome = await guard.filter(
        "t", "u", items, Channel.VOICE, speak_text_allowed=False, user_asked=False
    )
    assert outcome.allowed_item_ids == ()
    assert store.rules[BROTHER].terms == ("kofi",)
    # Later, without the atom, the name alone is held back.
    later = await guard.filter(
        "t",
        "u",
        excerpts("Kofi called again"),
        Channel.VOICE,
        speak_text_allowed=False,
        user_asked=False,
    )
    assert later.allowed_item_ids == ()


def test_names_come_only_from_atoms_about_the_subject_and_graph_aliases_of_them() -> None:
    portland = RuleId(RuleKind.DO_NOT_MENTION, TargetType.TOPIC, "portland")
    atoms = [
        SubjectAtom("a1", "relationship.sister.sarah", "User's sister Sarah lives in Portland."),
        SubjectAtom("a2", "location.portland", "User visits Portland Maine often.", (), ("Maine",)),
    ]
    assert subject_names(portland, atoms) == ["Maine", "Portland Maine"]
    assert aliases(BROTHER, ["Kwame"], ["Kwame Mensah", "Accra", "Dana"]) == ["Kwame Mensah"]
    assert aliases(portland, [], ["Portland Maine", "Sarah"]) == ["Portland Maine"]


MENTOR = RuleId(RuleKind.DO_NOT_MENTION, TargetType.TOPIC, "mentor")


@pytest.mark.parametrize(
    ("target", "text", "names"),
    [
        ("mentor", "My mentor Ama lives in Kumasi.", ["Ama"]),
        ("boss", "By the way, my boss's name is Kofi and she's from Tema.", ["Kofi"]),
        ("sister", "My sister is Åsa.", ["Åsa"]),
        ("sister", "MY SISTERS Ama and Efua said hi", ["Ama"]),
        ("barber", "Ama, my barber, is great.", ["Ama"]),
        ("coach", "Kofi Mensah is my coach.", ["Kofi Mensah"]),
        ("best friend", "my best friend Jo Smith lives in Leeds", ["Jo Smith"]),
        ("landlord", "I'm visiting my landlord Kwesi in Accra next month.", ["Kwesi"]),
        ("sister", "Then Tom, my sister, and I left.", ["Tom"]),
    ],
)
def test_a_relation_said_with_a_name_gives_the_name(
    target: str, text: str, names: list[str]
) -> None:
    assert said_names(RuleId(RuleKind.DO_NOT_MENTION, TargetType.TOPIC, target), text) == names


@pytest.mark.parametrize(
    "text",
    [
        "my sister is happy today",
        "My sister and I went to Paris.",
        "My aunt's address is 5 Road Lane.",
        "Remind me to call my uncle on Sunday.",
        "He is my sister's friend in Lisbon",
        "My brother Kwame lives in Accra.",
    ],
)
def test_no_name_is_taken_from_words_that_do_not_name_the_subject(text: str) -> None:
    """Lower-case words, pronouns, other relations and places after a verb are no name of
    the subject (a rule on "sister" learns nothing from "my brother Kwame")."""
    assert said_names(RuleId(RuleKind.DO_NOT_MENTION, TargetType.TOPIC, "sister"), text) == []


def test_only_topic_rules_learn_names_from_what_is_said() -> None:
    assert said_names(BROTHER_KEY, "My brother Kwame lives in Accra.") == []


async def test_an_item_held_back_for_a_relation_teaches_the_rule_the_name_it_gives() -> None:
    """No atom is about the mentor (the extractor knows no such fact yet): the working turn
    that says "my mentor Ama" is held back by the rule's word, and the name it gives joins
    the rule, so the loop and a later excerpt naming Ama alone are held back too."""
    guard, store = service(Capsule(atoms=[]), Graph())
    await guard.set_rule("t", "u", MENTOR, "", 1)
    outcome = await guard.filter(
        "t",
        "u",
        excerpts("My mentor Ama lives in Kumasi.", "Buy Ama a birthday present", "Tea at five"),
        Channel.VOICE,
        speak_text_allowed=False,
        user_asked=False,
    )
    assert outcome.allowed_item_ids == ("e2",)
    assert store.rules[MENTOR].terms == ("ama",)
    later = await guard.filter(
        "t",
        "u",
        excerpts("Ama called again"),
        Channel.VOICE,
        speak_text_allowed=False,
        user_asked=False,
    )
    assert later.allowed_item_ids == ()


async def test_a_fact_checked_for_storing_teaches_the_rule_its_subjects_name() -> None:
    guard, store = service(Capsule(atoms=[]), Graph())
    await guard.set_rule("t", "u", BROTHER, "", 1)
    fact = Item("f1", "relationship.brother.kofi", (), "User has a brother named Kofi.")
    assert await guard.check_store("t", "u", fact) is None
    assert store.rules[BROTHER].terms == ("kofi",)
    other = Item("f2", "relationship.sister.efua", (), "User has a sister named Efua.")
    assert await guard.check_store("t", "u", other) is None
    assert store.rules[BROTHER].terms == ("kofi",)
