"""Applying facts, corrections and commands to a working capsule (no I/O)."""

from __future__ import annotations

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomStatus,
    ChangeKind,
    Provenance,
    atom_id_of,
)
from memmesh.engines.atom_extractor.domain.control import plan_command
from memmesh.engines.atom_extractor.domain.corrections import apply_correction
from memmesh.engines.atom_extractor.domain.updates import apply_fact, confirm_atom
from memmesh.engines.atom_extractor.domain.working_set import ChangeContext, WorkingCapsule
from memmesh.extraction.model import Command, ExtractedFact, FactType
from memmesh.policy.sensitivity import Exposure

NOW = 1_767_225_600_000_000


def fact(
    text: str,
    key: str,
    tokens: tuple[str, ...] = (),
    confidence: int = 9000,
    category: str = "relationship",
) -> ExtractedFact:
    return ExtractedFact(text, category, FactType.USER_FACT, confidence, key, tokens, text)


def ctx(marker: str = "turn:1", now: int = NOW) -> ChangeContext:
    return ChangeContext("t", "u", marker, now, "s1")


def committed(ws: WorkingCapsule) -> WorkingCapsule:
    """A fresh working set over what ws would commit (as the next request would load it)."""
    return WorkingCapsule(ws.atoms())


def test_same_key_and_value_confirms_with_the_fixed_delta_and_the_request_now() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User's wife is Anna.", "relationship.spouse", ("Anna",)),
        ctx(),
        Provenance.USER_STATED,
    )
    again = committed(ws)
    apply_fact(
        again,
        fact("User's wife is Anna.", "relationship.spouse", ("Anna",)),
        ctx("turn:2", NOW + 5),
        Provenance.USER_STATED,
    )
    [confirmed] = again.changes
    assert (
        confirmed.kind is ChangeKind.CONFIRMED
        and confirmed.reason_code == reasons.REPEATED_STATEMENT
    )
    assert confirmed.confidence_delta_bp == reasons.CONFIRM_DELTA_BP
    assert confirmed.atom.confidence_bp == 9000 + reasons.CONFIRM_DELTA_BP
    assert confirmed.atom.confirm_time_us == NOW + 5 and confirmed.atom.version == 2
    assert confirmed.atom.evidence_turn_ids == ("1", "2")


def test_confidence_is_capped_below_certainty_for_stated_facts() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User's wife is Anna.", "relationship.spouse", ("Anna",), 9800),
        ctx(),
        Provenance.USER_STATED,
    )
    for turn in range(2, 5):
        ws = committed(ws)
        apply_fact(
            ws,
            fact("User's wife is Anna.", "relationship.spouse", ("Anna",), 9800),
            ctx(f"turn:{turn}"),
            Provenance.USER_STATED,
        )
    assert ws.atoms()[0].confidence_bp == reasons.STATED_CONFIDENCE_CAP_BP


def test_critical_token_change_keeps_both_atoms_in_conflict() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User's wife is Anna.", "relationship.spouse", ("Anna",)),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    apply_fact(
        ws,
        fact("User's wife is Hannah.", "relationship.spouse", ("Hannah",)),
        ctx("turn:2"),
        Provenance.USER_STATED,
    )
    atoms = {a.text: a for a in ws.atoms()}
    anna, hannah = atoms["User's wife is Anna."], atoms["User's wife is Hannah."]
    assert anna.status is AtomStatus.CONFLICT and hannah.status is AtomStatus.CONFLICT
    assert anna.conflict_atom_id == hannah.atom_id and hannah.conflict_atom_id == anna.atom_id
    assert {c.reason_code for c in ws.changes} == {reasons.CRITICAL_TOKEN_CHANGED}
    assert all(c.confidence_delta_bp == reasons.CONFLICT_DELTA_BP for c in ws.changes)


def test_value_change_without_critical_tokens_supersedes_with_a_reason() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User's favorite color is blue.", "preference.favorite.color"),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    apply_fact(
        ws,
        fact("User's favorite color is green.", "preference.favorite.color"),
        ctx("turn:2"),
        Provenance.USER_STATED,
    )
    kinds = [(c.kind, c.reason_code, c.atom.status) for c in ws.changes]
    assert kinds == [
        (ChangeKind.SUPERSEDED, reasons.VALUE_CHANGED, AtomStatus.SUPERSEDED),
        (ChangeKind.CREATED, reasons.VALUE_CHANGED, AtomStatus.ACTIVE),
    ]


def test_a_verified_atom_is_never_superseded_by_a_single_statement() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User's favorite color is blue.", "preference.favorite.color"),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    confirm_atom(ws, ws.atoms()[0].atom_id, ctx("turn:2"))
    ws = committed(ws)
    apply_fact(
        ws,
        fact("User's favorite color is green.", "preference.favorite.color"),
        ctx("turn:3"),
        Provenance.USER_STATED,
    )
    assert {a.status for a in ws.atoms()} == {AtomStatus.CONFLICT}
    assert ws.changes[0].reason_code == reasons.VERIFIED_VALUE_CHANGED


def test_at_most_five_new_atoms_per_turn_the_rest_dropped_with_a_reason() -> None:
    ws = WorkingCapsule([])
    for n in range(7):
        apply_fact(
            ws,
            fact(f"User likes topic number {n}.", f"preference.topic_{n}", category="preference"),
            ctx(),
            Provenance.USER_STATED,
        )
    created = [c for c in ws.changes if c.kind is ChangeKind.CREATED]
    dropped = [c for c in ws.changes if c.kind is ChangeKind.DROPPED]
    assert len(created) == 5 and len(dropped) == 2
    assert {c.reason_code for c in dropped} == {reasons.CHANGE_CAP_EXCEEDED}
    assert len(ws.upserts()) == 5


def test_at_most_five_updates_per_turn() -> None:
    ws = WorkingCapsule([])
    facts = [
        fact(f"User likes topic number {n}.", f"preference.topic_{n}", category="preference")
        for n in range(5)
    ]
    facts.append(fact("User likes topic number 5.", "preference.topic_5", category="preference"))
    for item in facts[:5]:
        apply_fact(ws, item, ctx(), Provenance.USER_STATED)
    ws = committed(ws)
    apply_fact(ws, facts[5], ctx("turn:1b"), Provenance.USER_STATED)
    ws = committed(ws)
    for item in facts:
        apply_fact(ws, item, ctx("turn:2"), Provenance.USER_STATED)
    assert [c.kind for c in ws.changes].count(ChangeKind.CONFIRMED) == 5
    assert [c.kind for c in ws.changes].count(ChangeKind.DROPPED) == 1


def test_atom_ids_are_derived_from_scope_key_and_value() -> None:
    assert atom_id_of("t", "u", "k.a", "User likes tea.") == atom_id_of(
        "t", "u", "k.a", "user likes TEA"
    )
    assert atom_id_of("t", "u", "k.a", "User likes tea.") != atom_id_of(
        "t", "u2", "k.a", "User likes tea."
    )


def test_correction_updates_exactly_one_atom_in_place() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User has a sister named Sarah.", "relationship.sister.sarah", ("Sarah",)),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    original = ws.atoms()[0]
    apply_correction(ws, "Sarah", "Sandra", ctx("turn:2"))
    [corrected] = ws.changes
    assert (
        corrected.kind is ChangeKind.CORRECTED and corrected.reason_code == reasons.USER_CORRECTION
    )
    assert corrected.confidence_delta_bp == reasons.CORRECTION_DELTA_BP
    atom = corrected.atom
    assert atom.atom_id == original.atom_id and atom.text == "User has a sister named Sandra."
    assert atom.key == "relationship.sister.sandra" and atom.critical_tokens == ("Sandra",)
    assert atom.provenance is Provenance.VERIFIED and atom.version == original.version + 1


def test_correction_resolves_a_conflict_in_favour_of_the_meant_value() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User's wife is Anna.", "relationship.spouse", ("Anna",)),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    apply_fact(
        ws,
        fact("User's wife is Hannah.", "relationship.spouse", ("Hannah",)),
        ctx("turn:2"),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    apply_correction(ws, "Anna", "Hannah", ctx("turn:3"))
    corrected = [c for c in ws.changes if c.kind is ChangeKind.CORRECTED]
    assert len(corrected) == 1 and corrected[0].atom.text == "User's wife is Hannah."
    statuses = {a.text: a.status for a in ws.atoms()}
    assert statuses == {
        "User's wife is Anna.": AtomStatus.SUPERSEDED,
        "User's wife is Hannah.": AtomStatus.ACTIVE,
    }


def test_correction_of_a_value_nobody_holds_changes_nothing() -> None:
    ws = WorkingCapsule([])
    apply_correction(ws, "Sarah", "Sandra", ctx())
    assert ws.changes == [] and ws.upserts() == []


def test_forget_by_target_deletes_content_and_frees_the_conflict_partner() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User's wife is Anna.", "relationship.spouse", ("Anna",)),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    apply_fact(
        ws,
        fact("User's wife is Hannah.", "relationship.spouse", ("Hannah",)),
        ctx("turn:2"),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    plan = plan_command(ws, Command.FORGET, "Anna", (), ctx("turn:3"), "s1")
    assert len(plan.affected_atom_ids) == 1
    [remaining] = ws.atoms()
    assert remaining.text == "User's wife is Hannah." and remaining.status is AtomStatus.ACTIVE
    forgotten = next(c for c in ws.changes if c.kind is ChangeKind.FORGOTTEN)
    assert forgotten.atom.text == "" and ws.deletes() == plan.affected_atom_ids


def test_forget_without_target_takes_the_atoms_last_referenced() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User has a sister named Sarah.", "relationship.sister.sarah", ("Sarah",)),
        ctx(),
        Provenance.USER_STATED,
    )
    apply_fact(
        ws,
        fact("User's wife is Anna.", "relationship.spouse", ("Anna",)),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    sister = next(a for a in ws.atoms() if "Sarah" in a.text)
    plan = plan_command(ws, Command.FORGET, "", (sister.atom_id,), ctx("turn:2"), "s1")
    assert plan.affected_atom_ids == [sister.atom_id]
    assert [a.text for a in ws.atoms()] == ["User's wife is Anna."]


def test_do_not_mention_and_do_not_store_request_rules_on_topic_and_key() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User has a sister named Sarah.", "relationship.sister.sarah", ("Sarah",)),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    mention = plan_command(ws, Command.DO_NOT_MENTION, "my sister", (), ctx("turn:2"), "s1")
    assert [r.label() for r in mention.rules] == [
        "DO_NOT_MENTION:KEY:relationship.sister.sarah",
        "DO_NOT_MENTION:TOPIC:sister",
    ]
    assert len(ws.atoms()) == 1
    store = plan_command(ws, Command.DO_NOT_STORE, "my sister", (), ctx("turn:3"), "s1")
    assert store.skip_facts and {r.kind for r in store.rules} == {"DO_NOT_STORE"}
    assert ws.atoms() == []


def test_pull_only_marks_atoms_and_requests_a_rule() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User is allergic to peanuts.", "constraint.allergy.peanut", category="constraint"),
        ctx(),
        Provenance.USER_STATED,
    )
    ws = committed(ws)
    plan = plan_command(ws, Command.PULL_ONLY, "peanuts", (), ctx("turn:2"), "s1")
    assert ws.atoms()[0].pull_only and ws.changes[0].kind is ChangeKind.MARKED
    assert "PULL_ONLY:KEY:constraint.allergy.peanut" in [r.label() for r in plan.rules]


def test_health_facts_are_not_safe_to_speak_by_default() -> None:
    ws = WorkingCapsule([])
    apply_fact(
        ws,
        fact("User has diabetes.", "constraint.medical.diabete", category="constraint"),
        ctx(),
        Provenance.USER_STATED,
    )
    assert ws.atoms()[0].exposure is Exposure.SAFE_TO_TEXT
    assert "health" in ws.atoms()[0].topics
