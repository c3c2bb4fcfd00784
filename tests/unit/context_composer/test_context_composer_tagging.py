"""Seed 001 §2.11.10 tagging and "Current State wins over memory"."""

from __future__ import annotations

import pytest
from composer_fakes import DAY_US, NOW_US, atom, pass_all, query

from memmesh.engines.context_composer.domain.assemble import compose_bundle, guard_plan
from memmesh.engines.context_composer.domain.model import (
    CONFIRMED,
    CONFLICT,
    STALE,
    TENTATIVE,
    Gathered,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.domain.tagging import tag_atom
from memmesh.engines.context_composer.mapping import bundle_size


def compose(atoms, facts=None, text="what do I like"):  # type: ignore[no-untyped-def]
    q = query(text)
    gathered = Gathered(facts or UserFacts(), Retrieved(atoms=tuple(atoms)), SessionMemory())
    plan = guard_plan(q, gathered)
    return compose_bundle(q, gathered, plan, pass_all(plan.items), bundle_size)


def test_fresh_confident_user_stated_atom_is_confirmed() -> None:
    assert tag_atom(atom(1), UserFacts(), NOW_US) == CONFIRMED


def test_atom_in_conflict_status_is_tagged_conflict() -> None:
    assert tag_atom(atom(1, status="CONFLICT"), UserFacts(), NOW_US) == CONFLICT


@pytest.mark.parametrize(
    ("atom_type", "days"), [("USER_FACT", 30), ("USER_PATTERN", 14), ("SHARED_NARRATIVE", 7)]
)
def test_atom_is_stale_just_past_its_type_window_and_not_at_it(atom_type: str, days: int) -> None:
    at_window = atom(1, type=atom_type, create_us=NOW_US - days * DAY_US, confirm_us=0)
    past_window = atom(1, type=atom_type, create_us=NOW_US - days * DAY_US - 1, confirm_us=0)
    assert tag_atom(at_window, UserFacts(), NOW_US) == CONFIRMED
    assert tag_atom(past_window, UserFacts(), NOW_US) == STALE


def test_a_recent_confirmation_keeps_an_old_atom_fresh() -> None:
    old = atom(1, create_us=NOW_US - 400 * DAY_US, confirm_us=NOW_US - 2 * DAY_US)
    assert tag_atom(old, UserFacts(), NOW_US) == CONFIRMED


def test_pinned_atom_never_goes_stale() -> None:
    assert (
        tag_atom(
            atom(1, pinned=True, create_us=NOW_US - 999 * DAY_US, confirm_us=0), UserFacts(), NOW_US
        )
        == CONFIRMED
    )


def test_low_confidence_or_inferred_atom_is_tentative() -> None:
    assert tag_atom(atom(1, confidence_bp=7999), UserFacts(), NOW_US) == TENTATIVE
    assert (
        tag_atom(atom(1, provenance="INFERRED", confidence_bp=9900), UserFacts(), NOW_US)
        == TENTATIVE
    )
    assert (
        tag_atom(atom(1, type="SHARED_NARRATIVE", confidence_bp=7500), UserFacts(), NOW_US)
        == CONFIRMED
    )


def test_conflict_outranks_staleness_and_staleness_outranks_low_confidence() -> None:
    stale_and_low = atom(1, confidence_bp=5000, create_us=NOW_US - 90 * DAY_US, confirm_us=0)
    assert tag_atom(stale_and_low, UserFacts(), NOW_US) == STALE
    assert tag_atom(atom(1, status="CONFLICT", confidence_bp=5000), UserFacts(), NOW_US) == CONFLICT


def test_name_atom_contradicting_current_state_is_conflict_and_push_shows_current_state() -> None:
    name_atom = atom(
        1,
        key="identity.name",
        text="User's name is Bob",
        critical_tokens=("Bob",),
        category="IDENTITY",
    )
    composed = compose([name_atom], UserFacts(display_name="Sam"), "what is my name")
    assert composed.bundle.push.display_name == "Sam"
    assert [t.tag for t in composed.bundle.atoms] == [CONFLICT]
    assert composed.counters.conflict_trigger_count == 1
    assert (
        composed.bundle.question is not None and composed.bundle.question.reason_code == "CONFLICT"
    )


def test_language_and_contact_atoms_are_checked_against_current_state() -> None:
    facts = UserFacts(primary_language="en-GB", contact_preference="TEXT")
    french = atom(1, key="identity.language.native", text="User's native language is French")
    english = atom(
        2,
        key="identity.language.native",
        text="User's native language is English",
        confidence_bp=6000,
    )
    calls = atom(3, key="preference.contact", text="User prefers phone calls")
    assert tag_atom(french, facts, NOW_US) == CONFLICT
    # Current State confirms it, so a low extraction confidence does not make it uncertain.
    assert tag_atom(english, facts, NOW_US) == CONFIRMED
    assert tag_atom(calls, facts, NOW_US) == CONFLICT


def test_atoms_without_a_current_state_fact_are_not_judged_by_it() -> None:
    assert (
        tag_atom(atom(1, key="identity.name", text="User's name is Bob"), UserFacts(), NOW_US)
        == CONFIRMED
    )
