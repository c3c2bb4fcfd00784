"""Topic threads and decisions (seed 001 §2.18): which session joins which thread, what a
thread's merged digest says, and which sentences are decisions."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from memmesh.engines.thread_store.domain.decisions import decisions, is_decision
from memmesh.engines.thread_store.domain.model import (
    DEFAULT_BOUNDS,
    Digest,
    DigestHead,
    Role,
    Turn,
)
from memmesh.engines.thread_store.domain.topics import (
    TopicRow,
    expired,
    joined_topic,
    merge,
    merge_heads,
    threads_of,
    topic_of,
)
from memmesh.engines.thread_store.settings import ThreadStoreSettings

T0 = 1_767_225_600_000_000
DAY = 86_400_000_000


def digest(thread_id: str, summary: str, day: int = 0, **fields: object) -> Digest:
    base = Digest(thread_id, "", summary, (), (), "", (f"{thread_id}-t1",), T0 + day * DAY)
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "sentence",
    [
        "I think we'll go with oak cabinets.",
        "Okay, we decided to keep the sink where it is.",
        "Let's go with the white quartz countertop.",
        "I've booked the 9:40 train to Porto.",
        "Going with the blue one, final answer.",
        "We're going with the smaller venue.",
        "That's settled then, Friday it is.",
    ],
)
def test_choices_made_are_decisions(sentence: str) -> None:
    assert is_decision(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Should we go with oak or walnut?",
        "We haven't decided on the tiles yet.",
        "I can't decide between the two flats.",
        "Maybe we'll go with the cheaper one.",
        "My sister decided to move to Berlin last year, she loves it.",
        "The oak cabinets arrive on the 20th.",
    ],
)
def test_open_choices_questions_and_news_are_not_decisions(sentence: str) -> None:
    assert not is_decision(sentence)


def test_decisions_are_the_users_newest_first_with_their_turn() -> None:
    turns = [
        Turn("a", "s", Role.USER, "We decided to paint it green.", T0),
        Turn("b", "s", Role.ASSISTANT, "Great, we'll go with green then.", T0 + 1),
        Turn("c", "s", Role.USER, "Hmm. Let's go with grey after all.", T0 + 2),
    ]
    assert decisions(turns) == [
        ("Let's go with grey after all.", "c"),
        ("We decided to paint it green.", "a"),
    ]


KITCHEN = digest(
    "k1",
    "We're redoing the kitchen with Marco. The oak cabinets were ordered for the kitchen.",
    key_entities=("Marco",),
)


def test_a_session_sharing_the_topic_joins_its_thread() -> None:
    later = digest(
        "k2", "Marco says the kitchen cabinets arrive Friday.", day=6, key_entities=("Marco",)
    )
    assert joined_topic(later, [KITCHEN]) == "k1"


def test_a_shared_name_alone_is_not_a_shared_topic() -> None:
    # The same sister in two conversations about different things.
    cooking = digest(
        "c1", "Cooking dinner for my sister Ana, she is vegetarian.", key_entities=("Ana",)
    )
    gift = digest(
        "g1", "A birthday present for my sister Ana, maybe a scarf.", day=2, key_entities=("Ana",)
    )
    assert joined_topic(gift, [cooking]) is None


def test_words_of_talk_about_anything_join_nothing() -> None:
    one = digest("a", "Remind me next week, I think it's a good thing to plan today.")
    two = digest("b", "Remind me tomorrow, I think the new plan is a good thing.", day=1)
    assert joined_topic(two, [one]) is None


def test_the_closest_thread_wins_and_ties_go_to_the_most_recent() -> None:
    later = digest("k3", "Marco fitted the oak kitchen cabinets.", day=9, key_entities=("Marco",))
    other = dataclasses.replace(KITCHEN, thread_id="k0", update_us=T0 + DAY)
    assert joined_topic(later, [KITCHEN, other]) == "k0"
    assert joined_topic(later, [later]) is None


def test_one_session_threads_read_as_their_session() -> None:
    row = TopicRow("k1", pinned=True, use_count=4, last_use_us=T0 + 5)
    merged = merge(row, [KITCHEN])
    assert merged == dataclasses.replace(
        KITCHEN, pinned=True, use_count=4, last_use_us=T0 + 5, session_ids=("k1",)
    )


def test_a_merged_thread_carries_the_newest_fields_of_its_sessions() -> None:
    first = dataclasses.replace(
        KITCHEN,
        last_decisions=("We'll go with oak.",),
        next_step="Send Marco the measurements",
        unresolved_questions=("Which handles?",),
        evidence_turn_ids=tuple(f"k1-t{i}" for i in range(15)),
    )
    second = digest(
        "k2",
        "Marco measured the kitchen. We decided to keep the sink.",
        day=6,
        key_entities=("Marco", "Riverside"),
        last_decisions=("We decided to keep the sink.",),
        unresolved_questions=("Do we need a permit?",),
        evidence_turn_ids=tuple(f"k2-t{i}" for i in range(10)),
    )
    merged = merge(TopicRow("k1"), [second, first])
    assert merged.thread_id == "k1" and merged.session_ids == ("k1", "k2")
    assert merged.last_decisions == ("We decided to keep the sink.", "We'll go with oak.")
    assert merged.unresolved_questions == ("Do we need a permit?", "Which handles?")
    # The newest session has no next step: the one before's still stands.
    assert merged.next_step == "Send Marco the measurements"
    assert merged.key_entities[0] == "Marco" and merged.update_us == second.update_us
    assert len(merged.evidence_turn_ids) == DEFAULT_BOUNDS.evidence
    assert merged.evidence_turn_ids[-1] == "k2-t9"
    assert "kitchen" in merged.title.lower()
    # The newest session is told first.
    assert merged.summary.startswith("Marco measured the kitchen.")


def test_heads_merge_per_thread_with_the_threads_pin_and_uses() -> None:
    heads = [
        DigestHead("k1", T0, False, 0, 0, False),
        DigestHead("k2", T0 + DAY, False, 0, 0, True),
        DigestHead("p1", T0 + 2, False, 0, 0, False),
    ]
    members = {"k1": "k1", "k2": "k1"}
    rows = {"k1": TopicRow("k1", pinned=True, use_count=2, last_use_us=T0 + 3)}
    merged = {h.thread_id: h for h in merge_heads(heads, members, rows)}
    assert set(merged) == {"k1", "p1"}
    assert merged["k1"] == DigestHead("k1", T0 + DAY, True, 2, T0 + 3, True)
    assert topic_of("k2", members, rows) == "k1" and topic_of("p1", members, rows) == "p1"
    threads = threads_of([KITCHEN, digest("k2", "More.", day=1)], members, rows)
    assert list(threads) == ["k1"] and threads["k1"].session_ids == ("k1", "k2")


def test_retention_windows_are_per_tenant_and_positive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMMESH_THREAD_STORE_TENANT_THREAD_RETENTION_DAYS", '{"short": 30}')
    settings = ThreadStoreSettings()
    assert settings.thread_retention_us("short") == 30 * DAY
    assert settings.thread_retention_us("other") == 365 * DAY
    monkeypatch.setenv("MEMMESH_THREAD_STORE_TENANT_THREAD_RETENTION_DAYS", '{"bad": 0}')
    with pytest.raises(ValidationError, match="bad"):
        ThreadStoreSettings()


def test_expiry_spares_pinned_threads_and_unresolved_ones_for_90_days() -> None:
    now = T0 + 200 * DAY
    heads = [
        DigestHead("old", T0, False, 0, 0, False),
        DigestHead("old-pinned", T0, True, 0, 0, False),
        DigestHead("open-60", now - 60 * DAY, False, 0, 0, True),
        DigestHead("open-100", now - 100 * DAY, False, 0, 0, True),
        DigestHead("used", T0, False, 1, now - DAY, False),
    ]
    assert expired(heads, now, 30 * DAY) == ["old", "open-100"]
    assert expired(heads, now, 365 * DAY) == []
