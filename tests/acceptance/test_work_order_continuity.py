"""Pending work continuity (seed 001 §2.21B) through the gateway over real engine processes,
on the replayed conversation of `fixtures/continuity/work_orders.jsonl`: the pending work
order is offered on a HOT return as "where we left off" bullets, on a WARM return as exactly
one question, never after "forget that", and is canceled with a reason-coded ledger event
after "cancel that"; the DONE one is never offered. Nothing is executed: the bundle only
carries text."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from acceptance_mesh import DAY_US, MINUTE_US, NOW_US, TENANT, TENANT_KEY, User, running_mesh

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import bundle_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.errors import details_of
from memmesh.runtime.supervisor import Mesh

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/continuity/work_orders.jsonl"
START = bundle_pb2.SESSION_MODE_SESSION_START
TITLE = "book a table at Luigi's for Friday"
QUESTION = re.compile(r"^Do you want to resume (.+) or start something new\?$")


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "work_orders")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def replay(user: User, session_id: str = "s-plan") -> None:
    """The fixture's conversation, its work order updates and its close, in order."""
    for line in FIXTURE.read_text().splitlines():
        step = json.loads(line)
        at_us = NOW_US + step["at_min"] * MINUTE_US
        if "say" in step:
            await user.say(step["say"], at_us, session_id)
        elif "work_order" in step:
            order = step["work_order"]
            await user.gateway.upsert_work_order(
                user.user_id,
                order["work_order_id"],
                order["title"],
                order["status"],
                at_us,
                order.get("pending_question", ""),
            )
        else:
            await user.gateway.close_session(user.user_id, session_id, at_us)


async def returning(user: User, days: float, session_id: str) -> gateway_pb.BriefResponse:
    response = await user.brief("hi", NOW_US + int(days * DAY_US), session_id)
    assert response.bundle.mode == START
    return response


def offered_text(bundle: bundle_pb2.ContextBundle) -> str:
    return f"{bundle.episode_bridge}\n{bundle.clarification.text}".lower()


async def ledger_reasons(user: User) -> list[tuple[str, str]]:
    async with user._channel("ledger") as channel:
        stream = ledger_grpc.LedgerServiceStub(channel).Read(
            ledger_pb.ReadRequest(scope=user.scope)
        )
        events = [reply.event async for reply in stream]
    return [
        (
            event.reason_code,
            next(a.string_value for a in event.attributes if a.name == "work_order_id"),
        )
        for event in events
        if event.event_type == "WORK_ORDER_CHANGED"
    ]


async def test_a_hot_return_offers_the_pending_work_order_as_bullets(user: User) -> None:
    await replay(user)
    bundle = (await returning(user, 2, "s-back")).bundle
    assert bundle.episode_bridge.split("\n") == [
        "Where we left off:",
        f"- Pending: {TITLE}",
        "- Waiting on: For how many people?",
    ]
    assert not bundle.HasField("clarification")
    assert "flowers" not in offered_text(bundle)  # DONE: never offered


async def test_a_warm_return_asks_exactly_the_one_question_about_it(user: User) -> None:
    await replay(user)
    response = await returning(user, 10, "s-back")
    bundle = response.bundle
    assert bundle.episode_bridge == ""
    match = QUESTION.match(bundle.clarification.text)
    assert match and match.group(1) == TITLE, bundle.clarification.text
    assert response.counters.clarification_due_to_memory_count == 1


async def test_a_cold_return_offers_nothing(user: User) -> None:
    await replay(user)
    bundle = (await returning(user, 40, "s-back")).bundle
    assert "table" not in offered_text(bundle)


async def test_forget_that_after_the_offer_stops_it_being_mentioned(user: User) -> None:
    await replay(user)
    back = NOW_US + 2 * DAY_US
    assert "table" in offered_text((await user.brief("hi", back, "s-back")).bundle)
    heard = await user.say("Forget that.", back + MINUTE_US, "s-back")
    assert heard.command == "FORGET_WORK_ORDER"
    [pending] = (await user.gateway.pending_work_orders(user.user_id)).work_orders
    assert pending.work_order_id == "wo-table" and pending.do_not_mention
    assert pending.status == 2  # still CLARIFY: forgetting is not canceling
    for days, session in ((2.5, "s-hot"), (10, "s-warm")):
        assert "table" not in offered_text((await returning(user, days, session)).bundle)
    assert ("FORGOTTEN", "wo-table") in await ledger_reasons(user)


async def test_cancel_that_after_the_offer_cancels_it_with_a_ledger_reason(user: User) -> None:
    await replay(user)
    back = NOW_US + 10 * DAY_US
    assert QUESTION.match((await user.brief("hi", back, "s-back")).bundle.clarification.text)
    heard = await user.say("Cancel that.", back + MINUTE_US, "s-back")
    assert heard.command == "CANCEL_WORK_ORDER"
    assert list((await user.gateway.pending_work_orders(user.user_id)).work_orders) == []
    assert ("CANCELED_BY_USER", "wo-table") in await ledger_reasons(user)
    assert "table" not in offered_text((await returning(user, 11, "s-later")).bundle)


async def test_cancel_that_without_an_offer_is_an_ordinary_turn(user: User) -> None:
    await replay(user)
    back = NOW_US + 40 * DAY_US  # COLD: nothing offered in this session
    await user.brief("hi", back, "s-back")
    heard = await user.say("Cancel that appointment with my dentist.", back + 1, "s-back")
    assert heard.command == ""
    heard = await user.say("Cancel that.", back + 2, "s-back")
    assert heard.command == ""
    assert [
        o.work_order_id for o in (await user.gateway.pending_work_orders(user.user_id)).work_orders
    ] == ["wo-table"]


async def test_the_command_rpc_acts_on_the_offered_or_the_named_work_order(user: User) -> None:
    await replay(user)
    back = NOW_US + 2 * DAY_US
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await user.gateway.command(user.user_id, "s-back", "CANCEL_WORK_ORDER", back)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert details_of(refused.value)[0] == "NO_WORK_ORDER_OFFERED"
    await user.brief("hi", back, "s-back")
    canceled = await user.gateway.command(user.user_id, "s-back", "CANCEL_WORK_ORDER", back + 1)
    assert (canceled.reason_code, canceled.work_order_id) == ("CANCELED_BY_USER", "wo-table")
    missing = await user.gateway.command(
        user.user_id, "s-back", "FORGET_WORK_ORDER", back + 2, "wo-none"
    )
    assert missing.reason_code == "WORK_ORDER_NOT_FOUND"
    # A canceled order never comes back to pending: the orchestrator is told so.
    with pytest.raises(grpc.aio.AioRpcError) as closed:
        await user.gateway.upsert_work_order(user.user_id, "wo-table", TITLE, "CLARIFY", back + 3)
    assert closed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert details_of(closed.value)[0] == "WORK_ORDER_CLOSED"


async def test_an_upsert_naming_no_status_is_refused_naming_the_field(user: User) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await user.gateway.upsert_work_order(user.user_id, "wo-1", TITLE, "UNSPECIFIED", NOW_US)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "status" in details_of(refused.value)[1]


async def test_an_unverified_speaker_is_offered_nothing(user: User) -> None:
    await replay(user)
    response = await user.gateway.brief(
        user.user_id, "s-back", NOW_US + 2 * DAY_US, "hi", identity_verified=False
    )
    assert "table" not in offered_text(response.bundle)


@pytest.mark.parametrize("said", ["Don't resume automatically.", "Only resume if I ask."])
async def test_the_resume_preferences_hold_it_back(user: User, said: str) -> None:
    await replay(user)
    heard = await user.say(said, NOW_US + 9 * MINUTE_US, "s-plan")
    assert heard.command == "RECALL_ONLY_IF_ASKED"
    assert "table" not in offered_text((await returning(user, 2, "s-back")).bundle)
