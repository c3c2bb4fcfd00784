"""Briefs composed at once are bounded: a Brief waits for a slot within its own budget and,
when it cannot start with the time a compose takes still left (half of the budget before any
compose was timed), fails closed at once (BUDGET_EXCEEDED) without touching the engines;
with a slot free it never waits."""

from __future__ import annotations

import asyncio

import pytest

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.context_composer.v1 import context_composer_service_pb2 as composer_pb
from memmesh.engines.gateway.asked_questions import AskedQuestions
from memmesh.engines.gateway.brief import BriefHandler
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.timeconv import timestamp_of
from memmesh.storage.cache import MemoryCache

BUDGET_S = 0.2


class SlowComposer:
    """A composer that takes `seconds` (or each of `then` in turn) and answers one atom."""

    def __init__(self, seconds: float, then: tuple[float, ...] = ()) -> None:
        self.seconds = seconds
        self.then = list(then)
        self.calls = 0

    async def Compose(
        self, request: composer_pb.ComposeRequest, timeout: float | None = None
    ) -> composer_pb.ComposeResponse:  # noqa: N802
        self.calls += 1
        await asyncio.sleep(self.then.pop(0) if self.then else self.seconds)
        bundle = bundle_pb2.ContextBundle(mode=bundle_pb2.SESSION_MODE_IN_SESSION)
        bundle.atoms.add(
            atom_id="a1",
            key="preference.tea",
            text="User likes tea.",
            exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
        )
        return composer_pb.ComposeResponse(bundle=bundle)


class PassingGuard:
    async def Filter(
        self, request: guard_pb.FilterRequest, timeout: float | None = None
    ) -> guard_pb.FilterResponse:  # noqa: N802
        return guard_pb.FilterResponse(allowed_item_ids=[item.item_id for item in request.items])


def handler(composer: SlowComposer, concurrency: int) -> BriefHandler:
    return BriefHandler(
        composer, PassingGuard(), AskedQuestions(MemoryCache()), BUDGET_S, concurrency
    )  # type: ignore[arg-type]


def brief_request(user: str) -> pb.BriefRequest:
    return pb.BriefRequest(
        scope={"tenant_id": "t", "user_id": user}, session_id="s", now=timestamp_of(1_767_225_600_000_000),
        query="what do I like?", channel=memory_pb2.CHANNEL_VOICE, identity_verified=True,
    )  # fmt: skip


async def test_a_brief_that_cannot_start_in_time_fails_closed_without_composing() -> None:
    composer = SlowComposer(seconds=0.15)
    gateway = handler(composer, concurrency=1)
    first, second = await asyncio.gather(
        gateway.brief(brief_request("u1"), None), gateway.brief(brief_request("u2"), None)
    )
    assert (first.degraded, [a.atom_id for a in first.bundle.atoms]) == (False, ["a1"])
    assert (second.degraded, second.reason_code) == (True, "BUDGET_EXCEEDED")
    assert list(second.bundle.atoms) == [] and composer.calls == 1


async def test_a_brief_waits_for_a_slot_that_frees_in_time() -> None:
    composer = SlowComposer(seconds=0.03)
    gateway = handler(composer, concurrency=1)
    answers = await asyncio.gather(*(gateway.brief(brief_request(f"u{n}"), None) for n in range(2)))
    assert [a.degraded for a in answers] == [False, False] and composer.calls == 2


async def test_free_slots_never_delay_a_brief_even_with_little_time_left() -> None:
    composer = SlowComposer(seconds=0.0)
    gateway = handler(composer, concurrency=4)
    answers = await asyncio.gather(*(gateway.brief(brief_request(f"u{n}"), 0.05) for n in range(4)))
    assert [a.degraded for a in answers] == [False] * 4


async def test_a_brief_that_could_not_finish_in_the_time_composes_take_does_not_compose() -> None:
    # Composes have been taking 0.13 s: a Brief getting its slot with less than that left
    # fails closed at once; before any compose was timed it would have composed (half the
    # budget was left) and run out of time with the work done.
    composer = SlowComposer(seconds=0.13, then=(0.13, 0.095))
    gateway = handler(composer, concurrency=1)
    assert not (await gateway.brief(brief_request("u0"), None)).degraded
    assert gateway.start_needs_s() == pytest.approx(0.13, abs=0.02)
    first, second = await asyncio.gather(
        gateway.brief(brief_request("u1"), None), gateway.brief(brief_request("u2"), None)
    )
    assert (first.degraded, second.degraded, second.reason_code) == (False, True, "BUDGET_EXCEEDED")
    assert composer.calls == 2


def test_the_time_a_brief_needs_stays_within_its_shares_of_the_budget() -> None:
    gateway = handler(SlowComposer(seconds=0.0), concurrency=1)
    assert gateway.start_needs_s() == BUDGET_S * 0.5
    gateway._timed(10.0)  # a compose far over the budget
    assert gateway.start_needs_s() == BUDGET_S * 0.75
    for _ in range(100):
        gateway._timed(0.0)
    assert gateway.start_needs_s() == BUDGET_S * 0.25
