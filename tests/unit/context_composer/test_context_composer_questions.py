"""The one-question rule, unanswered suppression, do-not-repeat flags and re-ask guards."""

from __future__ import annotations

from composer_fakes import DAY_US, NOW_US, atom, pass_all, query

from memmesh.engines.context_composer.domain.assemble import compose_bundle, guard_plan
from memmesh.engines.context_composer.domain.model import (
    CONFIRMED,
    Gathered,
    Retrieved,
    SessionMemory,
    TaggedAtom,
    UserFacts,
)
from memmesh.engines.context_composer.domain.questions import (
    DO_NOT_REPEAT_CAP,
    do_not_repeat_keys,
    question_id,
)
from memmesh.engines.context_composer.mapping import bundle_size


def compose(atoms, facts=None, text="tell me about it", **flags):  # type: ignore[no-untyped-def]
    q = query(text, **flags)
    gathered = Gathered(facts or UserFacts(), Retrieved(atoms=tuple(atoms)), SessionMemory())
    plan = guard_plan(q, gathered)
    return compose_bundle(q, gathered, plan, pass_all(plan.items), bundle_size)


def test_two_uncertain_items_give_exactly_one_question_about_the_top_ranked() -> None:
    atoms = [atom(1), atom(2, confidence_bp=6000), atom(3, status="CONFLICT")]
    composed = compose(atoms)
    question = composed.bundle.question
    assert question is not None
    assert (question.atom_id, question.reason_code) == ("atom-002", "LOW_CONFIDENCE")
    assert question.question_id == question_id("t1", "u1", "atom-002", "LOW_CONFIDENCE")
    assert composed.counters.clarification_due_to_memory_count == 1


def test_question_id_is_stable_and_differs_by_reason_and_user() -> None:
    assert question_id("t1", "u1", "a", "STALE") == question_id("t1", "u1", "a", "STALE")
    assert question_id("t1", "u1", "a", "STALE") != question_id("t1", "u1", "a", "CONFLICT")
    assert question_id("t1", "u1", "a", "STALE") != question_id("t1", "u2", "a", "STALE")


def test_confirmed_items_give_no_question() -> None:
    composed = compose([atom(1), atom(2)])
    assert composed.bundle.question is None
    assert composed.counters.clarification_due_to_memory_count == 0


def test_no_question_when_the_query_has_no_words() -> None:
    assert compose([atom(1, confidence_bp=5000)], text="").bundle.question is None


def test_unanswered_question_is_not_asked_again_and_its_item_is_left_out() -> None:
    first = compose([atom(1, confidence_bp=6000), atom(2, status="CONFLICT")])
    asked = first.bundle.question
    assert asked is not None and asked.atom_id == "atom-001"
    second = compose(
        [atom(1, confidence_bp=6000), atom(2, status="CONFLICT")],
        unanswered_question_ids=frozenset({asked.question_id}),
    )
    assert second.bundle.question is not None
    assert second.bundle.question.question_id != asked.question_id
    assert second.bundle.question.atom_id == "atom-002"
    assert "atom-001" not in [t.atom.atom_id for t in second.bundle.atoms]


def test_all_questions_unanswered_gives_no_question() -> None:
    atoms = [atom(1, confidence_bp=6000)]
    qid = question_id("t1", "u1", "atom-001", "LOW_CONFIDENCE")
    composed = compose(atoms, unanswered_question_ids=frozenset({qid}))
    assert composed.bundle.question is None
    assert composed.bundle.atoms == ()


def test_push_carries_do_not_repeat_keys_for_known_stable_facts() -> None:
    facts = UserFacts(
        display_name="Sam",
        primary_language="en",
        contact_preference="SPEAK",
        timezone="Europe/Paris",
    )
    city = atom(1, key="identity.residence", category="IDENTITY", text="User lives in Lyon")
    hobby = atom(2, key="preference.music", text="User likes jazz")
    keys = compose([city, hobby], facts).bundle.push.do_not_repeat_keys
    assert keys == (
        "identity.language",
        "identity.name",
        "identity.residence",
        "identity.timezone",
        "preference.contact",
    )


def test_confirmed_stable_fact_is_not_asked_again_for_a_weaker_duplicate() -> None:
    facts = UserFacts(display_name="Sam")
    duplicate = atom(
        1,
        key="identity.name",
        text="User's name is Sam",
        critical_tokens=("Sam",),
        confidence_bp=5000,
    )
    residence = atom(2, key="identity.residence", category="IDENTITY", text="User lives in Lyon")
    weaker_residence = atom(
        3,
        key="identity.residence",
        category="IDENTITY",
        text="User lives in Lyon",
        confidence_bp=6000,
    )
    composed = compose(
        [duplicate, residence, weaker_residence], facts, text="what is my name and where do I live"
    )
    assert composed.bundle.question is None


def test_reask_of_a_known_fact_only_with_a_reason_code() -> None:
    facts = UserFacts(display_name="Sam")
    name = atom(
        1,
        key="identity.name",
        text="User's name is Sam",
        critical_tokens=("Sam",),
        category="IDENTITY",
    )
    assert compose([name], facts).bundle.question is None
    review = compose([name], facts, user_review_requested=True).bundle.question
    assert review is not None and review.reason_code == "USER_REQUEST"
    restored = compose([name], facts, device_restored=True).bundle.question
    assert restored is not None and restored.reason_code == "DEVICE_RESTORE"
    conflicting = atom(1, key="identity.name", text="User's name is Bob", critical_tokens=("Bob",))
    conflict = compose([conflicting], facts).bundle.question
    assert conflict is not None and conflict.reason_code == "CONFLICT"
    stale = atom(
        4,
        key="identity.residence",
        category="IDENTITY",
        create_us=NOW_US - 60 * DAY_US,
        confirm_us=0,
    )
    assert compose([stale], facts).bundle.question.reason_code == "STALE"  # type: ignore[union-attr]


def test_an_uncertain_item_is_asked_before_a_review_question() -> None:
    atoms = [atom(1), atom(2, confidence_bp=6000)]
    question = compose(atoms, user_review_requested=True).bundle.question
    assert question is not None and (question.atom_id, question.reason_code) == (
        "atom-002",
        "LOW_CONFIDENCE",
    )


def test_do_not_repeat_set_is_capped_with_deterministic_lru_eviction() -> None:
    atoms = [
        TaggedAtom(
            atom(
                i,
                key=f"identity.trait.t{i:03d}",
                category="IDENTITY",
                confirm_us=NOW_US - (300 - i) * 1000,
            ),
            CONFIRMED,
        )
        for i in range(200)
    ]
    result = do_not_repeat_keys(UserFacts(display_name="Sam"), atoms)
    assert len(result.keys) == DO_NOT_REPEAT_CAP
    assert result.evicted == 200 + 1 - DO_NOT_REPEAT_CAP
    # Current State keys are never evicted; among atoms the most recently confirmed stay.
    assert "identity.name" in result.keys
    assert "identity.trait.t199" in result.keys and "identity.trait.t000" not in result.keys
    assert result == do_not_repeat_keys(UserFacts(display_name="Sam"), list(reversed(atoms)))
