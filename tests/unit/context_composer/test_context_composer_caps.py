"""Caps, the 32 KB byte cap, rank order, determinism, counters, hints, tone and resume surfacing."""

from __future__ import annotations

from composer_fakes import NOW_US, RuleGuard, atom, pass_all, query, turn

from memmesh.engines.context_composer.domain.assemble import (
    BUNDLE_BYTES_CAP,
    EXCERPT_CHARS,
    MAX_DIGESTS,
    compose_bundle,
    guard_plan,
)
from memmesh.engines.context_composer.domain.hints import tone_labels
from memmesh.engines.context_composer.domain.model import (
    CorrectionPair,
    Digest,
    Gathered,
    Loop,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.domain.text import cut_words
from memmesh.engines.context_composer.mapping import bundle_message, bundle_size, compose_response


def compose(gathered: Gathered, text: str = "what do I like", verdict=None, **flags):  # type: ignore[no-untyped-def]
    q = query(text, **flags)
    plan = guard_plan(q, gathered)
    return compose_bundle(q, gathered, plan, verdict or pass_all(plan.items), bundle_size)


def loops(count: int) -> tuple[Loop, ...]:
    return tuple(
        Loop(f"loop-{i}", "commitment", f"Do task {i}", i % 3, NOW_US - i, f"turn-{i}")
        for i in range(count)
    )


def test_more_relevant_atoms_than_fit_keeps_the_top_twenty_in_rank_order() -> None:
    ranked = tuple(atom(i) for i in range(30))
    composed = compose(Gathered(UserFacts(), Retrieved(atoms=ranked), SessionMemory()))
    assert [t.atom.atom_id for t in composed.bundle.atoms] == [a.atom_id for a in ranked[:20]]
    assert composed.counters.atoms_selected_count == 20


def test_at_most_two_short_excerpts_cut_on_a_word_boundary_skipping_working_memory() -> None:
    long_text = "word " * 200
    turns = tuple(turn(i, text=f"excerpt{i} {long_text}") for i in range(5))
    session = SessionMemory(turns=(turns[0],))
    composed = compose(Gathered(UserFacts(), Retrieved(turns=turns), session))
    excerpts = composed.bundle.excerpts
    assert [e.turn_id for e in excerpts] == ["turn-001", "turn-002"]
    for excerpt in excerpts:
        assert len(excerpt.text) <= EXCERPT_CHARS
        assert excerpt.text.endswith("word…")


def test_digests_citing_a_ranked_turn_come_first_and_survive_the_cap() -> None:
    others = tuple(Digest(f"d{i:02d}", "title", f"Summary {i}.") for i in range(MAX_DIGESTS))
    quoting = Digest("quoting", "title", "Quoting.", evidence_turn_ids=("turn-003",))
    retrieved = Retrieved(turns=(turn(3),), digests=(*others, quoting))
    composed = compose(Gathered(UserFacts(), retrieved, SessionMemory()))
    ids = [d.digest_id for d in composed.bundle.digests]
    assert ids == ["quoting", *(d.digest_id for d in others[: MAX_DIGESTS - 1])]


def test_cut_words_never_splits_a_word() -> None:
    assert cut_words("alpha beta gamma", 12) == "alpha beta…"
    assert cut_words("alpha beta", 12) == "alpha beta"
    assert cut_words("  spaced   out  ", 20) == "spaced out"


def test_working_memory_keeps_the_last_six_turns() -> None:
    session = SessionMemory(turns=tuple(turn(i, session="s-now") for i in range(9)))
    composed = compose(Gathered(UserFacts(), Retrieved(), session))
    assert [t.turn_id for t in composed.bundle.working_memory] == [
        f"turn-{i:03d}" for i in range(3, 9)
    ]


def test_bundle_never_exceeds_32_kb_and_drops_the_lowest_ranked_first() -> None:
    big = "x" * 1400
    ranked = tuple(atom(i, text=f"User fact {i} {big}") for i in range(20))
    session = SessionMemory(
        turns=tuple(turn(i, session="s-now", text="y " * 499) for i in range(6)),
        rolling_summary="z " * 700,
        loops=loops(10),
    )
    turns = tuple(turn(50 + i, text="w " * 300) for i in range(4))
    digests = tuple(Digest(f"d{i}", "title", "v " * 400) for i in range(3))
    composed = compose(
        Gathered(UserFacts(display_name="Sam"), Retrieved(ranked, turns, digests), session)
    )
    size = len(bundle_message(composed.bundle).SerializeToString())
    assert size <= BUNDLE_BYTES_CAP
    assert composed.counters.context_bundle_bytes == size
    kept = [t.atom.atom_id for t in composed.bundle.atoms]
    assert 0 < len(kept) < 20
    assert kept == [a.atom_id for a in ranked[: len(kept)]]
    # Pull extras go before atoms; session continuity stays.
    assert composed.bundle.excerpts == () and composed.bundle.digests == ()
    assert len(composed.bundle.working_memory) == 6


def test_same_state_and_request_give_byte_identical_output() -> None:
    def gathered() -> Gathered:
        session = SessionMemory(
            turns=(turn(1, session="s-now"),), rolling_summary="We talked.", loops=loops(4)
        )
        retrieved = Retrieved(
            tuple(atom(i, confidence_bp=7000 + i * 100) for i in range(25)),
            (turn(7), turn(8)),
            (Digest("d1", "", "sum"),),
        )
        return Gathered(
            UserFacts(display_name="Sam", primary_language="en"),
            retrieved,
            session,
            None,
            (CorrectionPair("Sara", "Sarah"),),
        )

    first = compose_response(compose(gathered())).SerializeToString()
    second = compose_response(compose(gathered())).SerializeToString()
    assert first == second
    shuffled = gathered()
    shuffled = Gathered(
        shuffled.facts,
        shuffled.retrieved,
        SessionMemory(
            shuffled.session.turns,
            shuffled.session.rolling_summary,
            tuple(reversed(shuffled.session.loops)),
        ),
        None,
        shuffled.corrections,
    )
    assert compose_response(compose(shuffled)).SerializeToString() == first


def test_counters_count_what_the_bundle_holds() -> None:
    atoms = (atom(1), atom(2, confidence_bp=5000), atom(3, status="CONFLICT"), atom(4))
    guard = RuleGuard(do_not_mention_topics={"secret"})
    session = SessionMemory(
        turns=(turn(1, session="s-now", text="my secret plan"), turn(2, session="s-now"))
    )
    q = query("tell me")
    gathered = Gathered(UserFacts(), Retrieved(atoms, (turn(9),)), session)
    plan = guard_plan(q, gathered)
    import asyncio

    verdict = asyncio.run(
        guard.filter("t1", "u1", "VOICE", plan.items, plan.speak_text_allowed, plan.user_asked)
    )
    counters = compose_bundle(q, gathered, plan, verdict, bundle_size).counters
    assert counters.atoms_selected_count == 4
    assert counters.excerpts_selected_count == 1
    assert (
        counters.confirmed_count,
        counters.tentative_count,
        counters.conflict_trigger_count,
    ) == (2, 2, 1)
    assert counters.clarification_due_to_memory_count == 1
    assert counters.do_not_mention_hits_count == 1


def test_hint_bundle_has_sorted_bounded_vocabulary_and_corrections() -> None:
    atoms = tuple(atom(i, critical_tokens=(f"Name{i:02d}",)) for i in range(20))
    corrections = tuple(CorrectionPair(f"heard{i}", f"Meant{i:02d}") for i in range(40))
    composed = compose(
        Gathered(
            UserFacts(primary_language="fr"),
            Retrieved(atoms=atoms),
            SessionMemory(),
            None,
            corrections,
        )
    )
    hints = composed.hints
    assert hints.language == "fr"
    assert list(hints.vocabulary) == sorted(hints.vocabulary)
    assert len(hints.vocabulary) == 50
    assert "Name00" in hints.vocabulary and "Meant00" in hints.vocabulary
    assert hints.corrections[0] == CorrectionPair("heard0", "Meant00")


def test_tone_guidance_is_labels_only() -> None:
    assert tone_labels("I'm so worried about tomorrow") == ("gentle", "reassuring")
    assert tone_labels("quick, I need this asap") == ("brief", "calm")
    assert tone_labels("hello") == ("neutral",)


def test_recall_only_when_asked_keeps_pull_memory_back_until_the_user_asks() -> None:
    gathered = Gathered(
        UserFacts(recall_only_when_asked=True),
        Retrieved(atoms=(atom(1),), turns=(turn(3),)),
        SessionMemory(),
    )
    quiet = compose(gathered, "book a table").bundle
    assert quiet.atoms == () and quiet.excerpts == ()
    asked = compose(gathered, "what do you remember about my likes").bundle
    assert len(asked.atoms) == 1


def test_guard_verdict_removes_held_back_items_everywhere() -> None:
    atoms = (
        atom(1, exposure="INTERNAL_ONLY"),
        atom(2, text="User's sister is Ana", topics=("sister",)),
        atom(3),
    )
    session = SessionMemory(
        turns=(turn(1, session="s-now", text="my sister called"),),
        rolling_summary="About the sister.",
        loops=(Loop("l1", "commitment", "Call my sister", 1, 0, "t"),),
    )
    gathered = Gathered(UserFacts(), Retrieved(atoms, (turn(4, text="sister stuff"),)), session)
    q = query("hello")
    plan = guard_plan(q, gathered)
    import asyncio

    verdict = asyncio.run(
        RuleGuard(do_not_mention_topics={"sister"}).filter(
            "t1", "u1", "VOICE", plan.items, False, False
        )
    )
    bundle = compose_bundle(q, gathered, plan, verdict, bundle_size).bundle
    assert [t.atom.atom_id for t in bundle.atoms] == ["atom-003"]
    assert bundle.working_memory == () and bundle.excerpts == () and bundle.loops == ()
    assert bundle.rolling_summary == ""
