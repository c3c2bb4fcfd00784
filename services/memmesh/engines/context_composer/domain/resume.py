"""What a session start surfaces of the resume bundle (seed 001 §2.21, §2.21A).

The ThreadStore always builds the resume bundle; this decides only what the user meets:
HOT (last use within 72 h) gets "Where we left off" in 1-3 bullets for the top thread, WARM
(within 30 days) gets exactly one question and no bullets, COLD gets nothing. "Don't resume
automatically" and "only recall if I ask" hold the HOT bullets and the WARM question back;
asking to pick up where things were left surfaces the bullets whatever the tier, and so
does a thread the user asked to resume ("resume the thread about ..."), in session or not.
With "remember everything" (seed 001 §2.22) the windows are longer, HOT 7 days and WARM 90:
a stronger resume priority, with the same caps.

Pending work (seed 001 §2.21B) is authoritative and comes first: when the user's top pending
work order (most recently updated, then by id; never one the user asked to forget) was
updated within the WARM window, it is the session start's whole resume surface, HOT as
"Pending: <title>" and "Waiting on: <question>" bullets, WARM as the one question about it;
the thread's bullets or question are then not added, so a bundle carries one resume offer
and at most one question. The same preferences hold it back, asking to pick up surfaces its
bullets, and a thread the user asked to resume by name goes before it. Only text is offered.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from memmesh import bundle_items as items_of
from memmesh.bundle_items import kept
from memmesh.engines.context_composer.domain.model import (
    SESSION_START,
    ComposeQuery,
    Gathered,
    PendingWork,
    Question,
    UserFacts,
)
from memmesh.engines.context_composer.domain.questions import question_id
from memmesh.engines.context_composer.domain.text import asks_for_continuity, cut_words
from memmesh.text import sentences

LEFT_OFF_HEADER = "Where we left off:"
BULLET = "- "
BULLET_CHARS = 200
TITLE_CHARS = 80
RESUME_REASON = "RESUME"
DAY_US = 86_400_000_000
# Resume windows under REMEMBER_EVERYTHING (the ThreadStore's tiers are 72 h and 30 days).
REMEMBER_EVERYTHING_HOT_US = 7 * DAY_US
REMEMBER_EVERYTHING_WARM_US = 90 * DAY_US
# The work order windows, as the ThreadStore's thread tiers (seed 001 §2.21A).
HOT_US = 3 * DAY_US
WARM_US = 30 * DAY_US
PENDING_BULLET = "Pending: "
WAITING_BULLET = "Waiting on: "


@dataclass(frozen=True)
class ResumeSurface:
    """The bullets text (header and one line a bullet) or the one question, or neither."""

    bullets: str = ""
    question: str = ""
    thread_id: str = ""
    # Set when what is offered is a pending work order rather than a thread.
    work_order_id: str = ""


def left_off_text(bullets: tuple[str, ...]) -> str:
    """The header and one line a bullet; empty without bullets."""
    if not bullets:
        return ""
    lines = [f"{BULLET}{cut_words(b, BULLET_CHARS)}" for b in bullets]
    return "\n".join((LEFT_OFF_HEADER, *lines))


def resume_question_text(title: str) -> str:
    """The one WARM question (seed 001 §2.21A)."""
    return f"Do you want to resume {cut_words(title, TITLE_CHARS)} or start something new?"


def resume_surface(query: ComposeQuery, gathered: Gathered) -> ResumeSurface:
    """What this turn may surface of the resume bundle, before the ExposureGuard's verdict."""
    resume, facts = gathered.resume, gathered.facts
    if resume is None:
        return ResumeSurface()
    bullets = ResumeSurface(left_off_text(resume.left_off), thread_id=resume.thread_id)
    if query.resume_thread_id:
        # The user asked for this thread: its bullets, whatever its tier or the preferences.
        return bullets if resume.thread_id == query.resume_thread_id else ResumeSurface()
    if query.mode != SESSION_START:
        return ResumeSurface()
    work = work_surface(query, gathered.pending_work, facts)
    if work is not None:
        return work
    if asks_for_continuity(query.query):
        return bullets
    if facts.auto_resume_disabled or facts.recall_only_when_asked:
        return ResumeSurface()
    tier = _tier(resume.tier, resume.last_used_us, query.now_us, facts.remember_everything)
    if tier == "HOT":
        return bullets
    if tier == "WARM" and resume.title:
        return ResumeSurface(
            question=resume_question_text(resume.title), thread_id=resume.thread_id
        )
    return ResumeSurface()


def work_surface(
    query: ComposeQuery, work: PendingWork | None, facts: UserFacts
) -> ResumeSurface | None:
    """What a session start offers of the top pending work order; None when there is none
    within the WARM window, so the thread's resume surface applies instead."""
    if work is None:
        return None
    age = query.now_us - work.update_us
    hot_us, warm_us = (
        (REMEMBER_EVERYTHING_HOT_US, REMEMBER_EVERYTHING_WARM_US)
        if facts.remember_everything
        else (HOT_US, WARM_US)
    )
    if age > warm_us:
        return None
    lines = [f"{PENDING_BULLET}{cut_words(work.title, TITLE_CHARS)}"]
    if work.pending_question:
        lines.append(f"{WAITING_BULLET}{work.pending_question}")
    bullets = ResumeSurface(left_off_text(tuple(lines)), work_order_id=work.work_order_id)
    if asks_for_continuity(query.query):
        return bullets
    if facts.auto_resume_disabled or facts.recall_only_when_asked:
        # Held back as a thread would be; the thread, under the same preferences, is too.
        return ResumeSurface()
    if age <= hot_us:
        return bullets
    return ResumeSurface(
        question=resume_question_text(work.title), work_order_id=work.work_order_id
    )


def _tier(tier: str, last_used_us: int, now_us: int, remember_everything: bool) -> str:
    """The ThreadStore's tier, or under REMEMBER_EVERYTHING the one its longer windows give
    (never a weaker one)."""
    if not remember_everything or not last_used_us:
        return tier
    age = now_us - last_used_us
    if tier == "HOT" or age <= REMEMBER_EVERYTHING_HOT_US:
        return "HOT"
    if tier == "WARM" or age <= REMEMBER_EVERYTHING_WARM_US:
        return "WARM"
    return tier


def kept_bullets(text: str, allowed: Collection[str]) -> str:
    """The bullets text rebuilt from the sentences the guard let pass (BRIDGE items, one a
    sentence); empty when no bullet did."""
    parts = sentences(text)
    passed = kept(items_of.BRIDGE, parts, allowed)
    if not [line for line in passed if line != LEFT_OFF_HEADER]:
        return ""
    if len(passed) == len(parts):
        return text
    return "\n".join(passed if passed[0] == LEFT_OFF_HEADER else (LEFT_OFF_HEADER, *passed))


def resume_question(query: ComposeQuery, surface: ResumeSurface) -> Question | None:
    """The WARM question as the bundle's clarification (no atom: it is about a thread)."""
    if not surface.question:
        return None
    about = (
        f"work_order:{surface.work_order_id}"
        if surface.work_order_id
        else f"thread:{surface.thread_id}"
    )
    qid = question_id(query.tenant_id, query.user_id, about, RESUME_REASON)
    return Question(qid, "", "", surface.question, RESUME_REASON)
