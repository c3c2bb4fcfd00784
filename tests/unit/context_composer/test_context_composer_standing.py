"""Standing constraints pushed by the ranker go first and survive the caps; SAFE_TO_TEXT
items on a voice channel reach the bundle marked do-not-say (seed 001 §2.11.11)."""

from __future__ import annotations

import asyncio

from composer_fakes import DAY_US, NOW_US, RuleGuard, atom, query, turn

from memmesh.engines.context_composer.domain.assemble import (
    BUNDLE_BYTES_CAP,
    compose_bundle,
    guard_plan,
)
from memmesh.engines.context_composer.domain.model import (
    Composed,
    Gathered,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.mapping import bundle_message, bundle_size

ALLERGY = atom(
    900,
    atom_id="atom-allergy",
    key="constraint.allergy",
    text="User is allergic to peanuts.",
    category="CONSTRAINT",
    exposure="SAFE_TO_TEXT",
    critical_tokens=(),
)
VEGETARIAN = atom(
    901,
    atom_id="atom-diet",
    key="constraint.diet",
    text="User is vegetarian.",
    category="CONSTRAINT",
    critical_tokens=(),
)
SECRET = atom(902, atom_id="atom-pin", text="User's bank PIN is 4921.", exposure="INTERNAL_ONLY")


def compose(
    gathered: Gathered, text: str = "what should I cook tonight?", **flags: object
) -> Composed:
    q = query(text, **flags)
    plan = guard_plan(q, gathered)
    verdict = asyncio.run(
        RuleGuard().filter(
            "t1", "u1", q.channel, plan.items, plan.speak_text_allowed, plan.user_asked
        )
    )
    return compose_bundle(q, gathered, plan, verdict, bundle_size)


def marks(composed: Composed) -> dict[str, tuple[bool, bool]]:
    return {t.atom.atom_id: (t.do_not_say, t.atom.standing) for t in composed.bundle.atoms}


def test_standing_constraints_come_first_once_and_carry_the_do_not_say_mark_on_voice() -> None:
    ranked = (atom(1), ALLERGY, SECRET)
    gathered = Gathered(
        UserFacts(), Retrieved(atoms=ranked, standing=(ALLERGY, VEGETARIAN)), SessionMemory()
    )
    voice = compose(gathered)
    assert [t.atom.atom_id for t in voice.bundle.atoms] == ["atom-allergy", "atom-diet", "atom-001"]
    assert marks(voice) == {
        "atom-allergy": (True, True),
        "atom-diet": (False, True),
        "atom-001": (False, False),
    }
    message = bundle_message(voice.bundle)
    assert [(a.do_not_say, a.standing_constraint) for a in message.atoms] == [
        (True, True),
        (False, True),
        (False, False),
    ]
    text = compose(gathered, channel="TEXT")
    assert marks(text)["atom-allergy"] == (False, True)
    assert "atom-pin" not in marks(text)


def test_an_explicit_ask_or_the_speak_preference_lets_safe_to_text_be_said() -> None:
    gathered = Gathered(UserFacts(), Retrieved(standing=(ALLERGY,)), SessionMemory())
    assert marks(compose(gathered, "what do you remember about me?"))["atom-allergy"][0] is False
    spoken = Gathered(UserFacts(contact_preference="SPEAK"), gathered.retrieved, SessionMemory())
    assert marks(compose(spoken))["atom-allergy"][0] is False


def test_standing_constraints_outlast_the_atom_cap_and_the_byte_cap() -> None:
    big = "x" * 2400
    ranked = tuple(atom(i, text=f"User fact {i} {big}") for i in range(20))
    gathered = Gathered(
        UserFacts(), Retrieved(atoms=ranked, standing=(ALLERGY, VEGETARIAN)), SessionMemory()
    )
    composed = compose(gathered)
    ids = [t.atom.atom_id for t in composed.bundle.atoms]
    assert ids[:2] == ["atom-allergy", "atom-diet"]
    assert len(ids) < 20 and "atom-000" in ids and "atom-017" not in ids
    assert composed.counters.context_bundle_bytes <= BUNDLE_BYTES_CAP


def test_safe_to_text_turns_on_voice_are_kept_marked_and_internal_turns_stay_out() -> None:
    said = turn(1, session="s-now", text="I'm allergic to peanuts")
    said = type(said)(
        said.turn_id, said.session_id, said.role, said.text, said.time_us, "SAFE_TO_TEXT"
    )
    hidden = turn(2, session="s-now", text="my PIN is 4921")
    hidden = type(hidden)(
        hidden.turn_id, hidden.session_id, hidden.role, hidden.text, hidden.time_us, "INTERNAL_ONLY"
    )
    composed = compose(Gathered(UserFacts(), Retrieved(), SessionMemory(turns=(said, hidden))))
    assert [(t.turn_id, t.do_not_say) for t in composed.bundle.working_memory] == [
        ("turn-001", True)
    ]
    assert bundle_message(composed.bundle).working_memory[0].do_not_say


def test_no_clarification_question_is_asked_about_an_atom_not_to_be_said() -> None:
    stale = atom(
        903,
        atom_id="atom-old-allergy",
        key="constraint.allergy",
        text="User is allergic to shellfish.",
        exposure="SAFE_TO_TEXT",
        create_us=NOW_US - 800 * DAY_US,
        confirm_us=NOW_US - 800 * DAY_US,
        confidence_bp=5000,
    )
    gathered = Gathered(UserFacts(), Retrieved(atoms=(stale,)), SessionMemory())
    voice = compose(gathered, "what should I cook tonight?")
    assert marks(voice)["atom-old-allergy"][0] is True
    assert voice.bundle.question is None
    text = compose(gathered, "what should I cook tonight?", channel="TEXT")
    assert text.bundle.question is not None


def test_atoms_not_to_be_said_lend_no_term_to_the_hint_bundle() -> None:
    secret_diet = atom(
        904,
        atom_id="atom-kosher",
        text="User keeps kosher.",
        exposure="SAFE_TO_TEXT",
        critical_tokens=("Kashrut",),
    )
    gathered = Gathered(UserFacts(), Retrieved(atoms=(secret_diet, atom(1))), SessionMemory())
    assert "Kashrut" not in compose(gathered).hints.vocabulary
    assert "Thing1" in compose(gathered).hints.vocabulary
    assert "Kashrut" in compose(gathered, channel="TEXT").hints.vocabulary
