"""Which atoms are standing constraints, pushed whenever a request could touch them."""

from __future__ import annotations

import pytest

from memmesh.policy.standing import is_standing_constraint


@pytest.mark.parametrize(
    ("key", "text", "category"),
    [
        ("constraint.allergy", "User is allergic to peanuts.", "CONSTRAINT"),
        ("constraint.intolerance", "User is lactose intolerant.", "CONSTRAINT"),
        ("constraint.diet", "User is vegetarian.", "CONSTRAINT"),
        ("constraint.diet.meat", "User does not eat meat.", "CONSTRAINT"),
        ("constraint.medical.diabetes", "User has type 1 diabetes.", "CONSTRAINT"),
        ("constraint.sobriety", "User is two years sober", "CONSTRAINT"),
        ("constraint.accessibility.wheelchair", "User uses a wheelchair", "CONSTRAINT"),
        ("constraint.ability.walk", "User can't walk long distances", "CONSTRAINT"),
        ("identity.diet", "User is vegan.", "IDENTITY"),
        ("constraint.instruction.no_pork", "User does not eat pork.", "CONSTRAINT"),
    ],
)
def test_allergies_diets_health_limits_and_access_needs_are_standing(
    key: str, text: str, category: str
) -> None:
    assert is_standing_constraint(key, text, category)


@pytest.mark.parametrize(
    ("key", "text", "category"),
    [
        ("constraint.tool.vim", "User uses vim.", "CONSTRAINT"),
        ("constraint.units.metric", "User uses metric units.", "CONSTRAINT"),
        ("constraint.format.emoji", "User wants no emoji.", "CONSTRAINT"),
        ("preference.food", "User likes vegan food.", "PREFERENCE"),
        ("relationship.sister", "User's sister is allergic to cats.", "RELATIONSHIP"),
        ("preference.music", "User loves jazz.", "PREFERENCE"),
    ],
)
def test_tools_formats_preferences_and_other_people_are_not(
    key: str, text: str, category: str
) -> None:
    assert not is_standing_constraint(key, text, category)
