"""The recall summary: only safe atoms, pinned and confident first, at most 10 items and 1 KB."""

from __future__ import annotations

from memmesh.engines.exposure_guard.domain.filtering import CompiledRules
from memmesh.engines.exposure_guard.domain.recall import MAX_BYTES, SummaryAtom, recall_summary
from memmesh.engines.exposure_guard.domain.rules import (
    Channel,
    RuleId,
    RuleKind,
    TargetType,
)
from memmesh.engines.exposure_guard.mapping import exposure_of_wire
from memmesh.policy.sensitivity import Exposure


def atom(
    atom_id: str, text: str = "", exposure: Exposure = Exposure.SAFE_TO_SPEAK, **fields: object
) -> SummaryAtom:
    values: dict[str, object] = {"key": "", "topics": (), "pinned": False, "confidence_bp": 9000}
    values.update(fields)
    return SummaryAtom(
        atom_id=atom_id, text=text or f"User fact {atom_id}.", exposure=exposure, **values
    )  # type: ignore[arg-type]


def summary(
    atoms: list[SummaryAtom],
    rules: list[RuleId] | None = None,
    channel: Channel = Channel.VOICE,
    allowed: bool = False,
):  # type: ignore[no-untyped-def]
    return recall_summary(CompiledRules.of(rules or []), atoms, channel, speak_text_allowed=allowed)


def test_only_safe_atoms_are_summarised() -> None:
    atoms = [
        atom("a"),
        atom("b", exposure=Exposure.SAFE_TO_TEXT),
        atom("c", exposure=Exposure.INTERNAL_ONLY),
        atom("d", exposure=exposure_of_wire(0)),
        atom("e", key="relationship.sister"),
        atom("f", text="User's sisters live in Lisbon."),
        atom("g", superseded=True),
        atom("h", text="   "),
    ]
    rules = [
        RuleId(RuleKind.DO_NOT_MENTION, TargetType.KEY, "relationship.sister"),
        RuleId(RuleKind.DO_NOT_MENTION, TargetType.TOPIC, "sister"),
    ]
    assert summary(atoms, rules).atom_ids == ("a",)
    assert summary(atoms, rules, Channel.TEXT).atom_ids == ("a", "b")
    assert summary(atoms, rules, Channel.VOICE, allowed=True).atom_ids == ("a", "b")
    assert summary(atoms, rules).omitted_count == 0


def test_pull_only_atoms_and_rules_are_allowed_because_the_user_asked() -> None:
    rules = [RuleId(RuleKind.PULL_ONLY, TargetType.ATOM, "b")]
    assert summary([atom("a"), atom("b")], rules).atom_ids == ("a", "b")


def test_order_is_pinned_then_confidence_then_atom_id() -> None:
    atoms = [
        atom("z", confidence_bp=9500),
        atom("b", confidence_bp=8000, pinned=True),
        atom("a", confidence_bp=9500),
        atom("c", confidence_bp=9900),
    ]
    got = summary(atoms)
    assert got.atom_ids == ("b", "c", "a", "z")
    assert got.items == tuple(f"User fact {i}." for i in ("b", "c", "a", "z"))


def test_at_most_ten_items() -> None:
    got = summary([atom(f"a{n:02d}") for n in range(14)])
    assert len(got.items) == 10 and got.omitted_count == 4


def test_at_most_one_kilobyte_whole_items_only() -> None:
    big = "x" * 600
    atoms = [
        atom("a", big, confidence_bp=9999),
        atom("b", "é" * 300, confidence_bp=9998),
        atom("c", "short fact", confidence_bp=1),
    ]
    got = summary(atoms)
    # "b" is 600 bytes of UTF-8 (300 characters) and does not fit after "a"; "c" still does.
    assert got.atom_ids == ("a", "c")
    assert got.omitted_count == 1
    assert sum(len(item.encode()) for item in got.items) <= MAX_BYTES


def test_an_item_larger_than_the_cap_is_omitted_not_cut() -> None:
    got = summary([atom("a", "word " * 300)])
    assert got.items == () and got.omitted_count == 1
