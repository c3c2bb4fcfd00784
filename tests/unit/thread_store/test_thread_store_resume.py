"""Resume ordering and tiers of seed 001 §2.21A."""

from __future__ import annotations

from memmesh.engines.thread_store.domain.model import Digest
from memmesh.engines.thread_store.domain.resume import (
    HOT_WINDOW_US,
    UNRESOLVED_WINDOW_US,
    WARM_WINDOW_US,
    left_off,
    resume_candidates,
    resume_order,
    thread_about,
    tier_of,
)

NOW = 1_800_000_000_000_000
DAY = 24 * 3_600 * 1_000_000


def digest(thread_id: str, updated_days_ago: float, **fields: object) -> Digest:
    values: dict[str, object] = {
        "thread_id": thread_id, "title": thread_id, "summary": "", "key_entities": (), "unresolved_questions": (),
        "next_step": "", "evidence_turn_ids": (), "update_us": NOW - int(updated_days_ago * DAY),
    }  # fmt: skip
    return Digest(**{**values, **fields})  # type: ignore[arg-type]


def ids(digests: list[Digest]) -> list[str]:
    return [d.thread_id for d in digests]


def test_pinned_beats_unresolved_beats_recent_beats_use_count_beats_id() -> None:
    threads = [
        digest("recent", 0.1),
        digest("used-a-lot", 5, use_count=9),
        digest("used-once", 5, use_count=1),
        digest("b-tie", 7),
        digest("a-tie", 7),
        digest("open-question", 20, unresolved_questions=("Which flight?",)),
        digest("pinned-old", 200, pinned=True),
    ]
    assert ids(resume_order(threads, NOW)) == [
        "pinned-old", "open-question", "recent", "used-a-lot", "used-once", "a-tie", "b-tie",
    ]  # fmt: skip


def test_a_recorded_use_counts_as_recency() -> None:
    threads = [digest("a", 3), digest("b", 10, last_use_us=NOW - DAY)]
    assert ids(resume_order(threads, NOW)) == ["b", "a"]


def test_unresolved_priority_lapses_after_ninety_days() -> None:
    stale = digest("stale-open", 0, has_open_loops=True)
    stale = Digest(**{**stale.__dict__, "update_us": NOW - UNRESOLVED_WINDOW_US - 1})
    assert ids(resume_order([stale, digest("fresh", 80)], NOW)) == ["fresh", "stale-open"]


def test_tiers_at_their_boundaries() -> None:
    assert tier_of(digest("x", 0), NOW) == "HOT"
    assert (
        tier_of(Digest(**{**digest("x", 0).__dict__, "update_us": NOW - HOT_WINDOW_US}), NOW)
        == "HOT"
    )
    assert (
        tier_of(Digest(**{**digest("x", 0).__dict__, "update_us": NOW - HOT_WINDOW_US - 1}), NOW)
        == "WARM"
    )
    assert (
        tier_of(Digest(**{**digest("x", 0).__dict__, "update_us": NOW - WARM_WINDOW_US}), NOW)
        == "WARM"
    )
    assert (
        tier_of(Digest(**{**digest("x", 0).__dict__, "update_us": NOW - WARM_WINDOW_US - 1}), NOW)
        == "COLD"
    )


def test_candidates_exclude_the_opening_session_and_report_the_top_tier() -> None:
    candidates, tier = resume_candidates([digest("s-now", 0), digest("s-old", 10)], "s-now", NOW)
    assert ids(candidates) == ["s-old"] and tier == "WARM"
    assert resume_candidates([], "s-now", NOW) == ([], "")


def test_left_off_is_built_from_next_step_questions_then_the_newest_new_summary_sentences() -> None:
    shed = digest(
        "shed",
        1,
        summary="We measured the garden. The shed goes behind the apple tree. Cedar it is.",
        next_step="order cedar boards",
        unresolved_questions=("Which roof felt lasts longest?",),
    )
    assert left_off(shed) == (
        "Next step: order cedar boards",
        "Still open: Which roof felt lasts longest?",
        # "Cedar it is." says nothing the next step does not.
        "The shed goes behind the apple tree.",
    )
    only_summary = digest("s", 1, summary="We measured the garden. The shed goes behind it.")
    assert left_off(only_summary) == ("The shed goes behind it.", "We measured the garden.")
    assert left_off(digest("empty", 1)) == ()


def test_left_off_bullets_are_bounded_and_not_repeated() -> None:
    long = digest(
        "long", 1, summary=("word " * 100).strip() + ". Same. Same.", next_step="x " * 200
    )
    bullets = left_off(long)
    assert 1 <= len(bullets) <= 3 and len(set(bullets)) == len(bullets)
    assert all(len(b) <= 160 for b in bullets)


def test_thread_about_picks_the_thread_the_topic_names_ties_in_resume_order() -> None:
    shed = digest("shed", 60, title="garden shed", summary="Cedar boards behind the apple tree.")
    trip = digest("trip", 1, title="Lisbon trip", summary="Flights in May, a garden hotel.")
    other_shed = digest("shed-2", 90, title="shed roof", summary="The shed roof leaks.")
    threads = [shed, trip, other_shed]
    assert thread_about(threads, "the garden shed", "", NOW) is shed
    assert thread_about(threads, "Lisbon", "", NOW) is trip
    # A topic word in the title counts more than one in the summary...
    assert thread_about([shed, trip], "garden", "", NOW) is shed
    # ...and between equals the thread first in resume order (here the more recent) wins.
    plot = digest("plot", 5, title="garden plot")
    assert thread_about([shed, plot], "garden", "", NOW) is plot
    assert thread_about(threads, "the tax forms", "", NOW) is None
    assert thread_about(threads, "the", "", NOW) is None
    assert thread_about(threads, "garden shed", "shed", NOW) is other_shed
