"""Properties over random stores and queries: caps hold, output is deterministic, and no
INTERNAL_ONLY or DO_NOT_MENTION item ever reaches the bundle."""

from __future__ import annotations

import asyncio

from composer_fakes import NOW_US, RuleGuard, query
from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.engines.context_composer.domain.assemble import (
    BUNDLE_BYTES_CAP,
    compose_bundle,
    guard_plan,
)
from memmesh.engines.context_composer.domain.model import (
    Gathered,
    MemoryAtom,
    Retrieved,
    SessionMemory,
    TurnRecord,
    UserFacts,
)
from memmesh.engines.context_composer.mapping import bundle_message, bundle_size

WORDS = ["sister", "dentist", "rome", "jazz", "work", "coffee", "secret", "plan", "dog", "garden"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=300).map(" ".join)
atoms = st.builds(
    MemoryAtom,
    atom_id=st.uuids().map(str),
    key=st.sampled_from(
        [
            "identity.name",
            "identity.residence",
            "preference.food",
            "relationship.sister",
            "project.alpha",
        ]
    ),
    text=text,
    type=st.sampled_from(["USER_FACT", "USER_PATTERN", "SHARED_NARRATIVE"]),
    provenance=st.sampled_from(["INFERRED", "TOOL_DERIVED", "USER_STATED", "VERIFIED"]),
    confidence_bp=st.integers(0, 10_000),
    exposure=st.sampled_from(["SAFE_TO_SPEAK", "SAFE_TO_TEXT", "INTERNAL_ONLY", "UNSPECIFIED"]),
    pinned=st.booleans(),
    pull_only=st.booleans(),
    critical_tokens=st.lists(st.sampled_from(["Ana", "Rome", "42"]), max_size=3).map(tuple),
    create_us=st.integers(NOW_US - 400 * 86_400_000_000, NOW_US),
    status=st.sampled_from(["ACTIVE", "CONFLICT"]),
    topics=st.lists(st.sampled_from(WORDS), max_size=2).map(tuple),
    category=st.just("PREFERENCE"),
    confirm_us=st.just(0),
    last_use_us=st.just(0),
    use_count=st.integers(0, 5),
    evidence_turn_ids=st.just(()),
    standing=st.just(False),
)
turns = st.builds(
    TurnRecord,
    turn_id=st.uuids().map(str),
    session_id=st.sampled_from(["s-now", "s-old"]),
    role=st.sampled_from(["USER", "ASSISTANT"]),
    text=text,
    time_us=st.integers(0, NOW_US),
    exposure=st.sampled_from(["SAFE_TO_SPEAK", "SAFE_TO_TEXT", "INTERNAL_ONLY", "UNSPECIFIED"]),
    do_not_say=st.just(False),
)


@settings(max_examples=60, deadline=None)
@given(
    ranked=st.lists(atoms, max_size=40, unique_by=lambda a: a.atom_id),
    archive=st.lists(turns, max_size=10, unique_by=lambda t: t.turn_id),
    working=st.lists(turns, max_size=8, unique_by=lambda t: t.turn_id),
    banned=st.sets(st.sampled_from(WORDS), max_size=3),
    channel=st.sampled_from(["VOICE", "TEXT"]),
    query_text=text,
)
def test_caps_determinism_and_no_leak(
    ranked, archive, working, banned, channel, query_text
) -> None:  # type: ignore[no-untyped-def]
    q = query(query_text[:200], channel=channel)
    gathered = Gathered(
        UserFacts(display_name="Ana"),
        Retrieved(atoms=tuple(ranked), turns=tuple(archive)),
        SessionMemory(turns=tuple(working), rolling_summary=" ".join(WORDS)),
    )
    guard = RuleGuard(do_not_mention_topics=set(banned))
    plan = guard_plan(q, gathered)
    verdict = asyncio.run(
        guard.filter("t1", "u1", channel, plan.items, plan.speak_text_allowed, plan.user_asked)
    )
    composed = compose_bundle(q, gathered, plan, verdict, bundle_size)
    bundle = composed.bundle
    serialized = bundle_message(bundle).SerializeToString()
    assert len(serialized) <= BUNDLE_BYTES_CAP
    assert len(bundle.atoms) <= 20 and len(bundle.excerpts) <= 2 and len(bundle.working_memory) <= 6
    assert all(len(e.text) <= 280 for e in bundle.excerpts)
    assert (
        serialized
        == bundle_message(
            compose_bundle(q, gathered, plan, verdict, bundle_size).bundle
        ).SerializeToString()
    )
    for tagged in bundle.atoms:
        assert tagged.atom.exposure not in ("INTERNAL_ONLY", "UNSPECIFIED")
        # Seed 001 §2.11.11: SAFE_TO_TEXT on a voice channel is used, not said.
        assert tagged.do_not_say == (
            channel == "VOICE"
            and tagged.atom.exposure == "SAFE_TO_TEXT"
            and not plan.speak_text_allowed
        )
        assert not (tagged.atom.pull_only and not plan.user_asked)
    for turn in bundle.excerpts + bundle.working_memory:
        assert turn.exposure not in ("INTERNAL_ONLY", "UNSPECIFIED")
        assert turn.do_not_say == (
            channel == "VOICE" and turn.exposure == "SAFE_TO_TEXT" and not plan.speak_text_allowed
        )
    if bundle.question is not None:
        asked_about = next(t for t in bundle.atoms if t.atom.atom_id == bundle.question.atom_id)
        assert not asked_about.do_not_say
    texts = [t.atom.text for t in bundle.atoms] + [
        t.text for t in bundle.excerpts + bundle.working_memory
    ]
    texts += [bundle.rolling_summary, bundle.question.text if bundle.question else ""]
    for piece in texts:
        assert not set(piece.lower().replace("…", " ").split()) & banned
    ranked_ids = [a.atom_id for a in ranked]
    positions = [ranked_ids.index(t.atom.atom_id) for t in bundle.atoms]
    assert positions == sorted(positions)
