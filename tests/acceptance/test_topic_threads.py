"""Topic threads across sessions (seed 001 §2.18, §2.21A) through the gateway over real
engine processes, replaying fixtures/continuity/topic_threads.json: a kitchen renovation
talked about in three sessions over two weeks, with a trip planned in between, becomes one
thread with its decisions; a HOT return gets 1-3 bullets from it, a WARM return exactly
the one question naming it, a COLD return nothing until the user asks for it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from acceptance_mesh import (
    DAY_US,
    INTERNAL_TOKEN,
    MINUTE_US,
    NOW_US,
    TENANT,
    TENANT_KEY,
    User,
    running_mesh,
)

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import bundle_pb2
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

FIXTURE = Path(__file__).parents[2] / "fixtures" / "continuity" / "topic_threads.json"
CONVERSATIONS: dict[str, Any] = json.loads(FIXTURE.read_text())
EXPECTED: dict[str, Any] = CONVERSATIONS["expected"]
START = bundle_pb2.SESSION_MODE_SESSION_START
HEADER = "Where we left off:"
QUESTION = re.compile(r"^Do you want to resume (.+) or start something new\?$")


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "topic_threads")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def replay(user: User) -> int:
    """Every session of the fixture on its day, each closed; the last session's day."""
    last_day = 0
    for session in CONVERSATIONS["sessions"]:
        at = NOW_US + session["day"] * DAY_US
        for index, text in enumerate(session["turns"]):
            await user.say(text, at + index * MINUTE_US, session["session_id"])
        await user.gateway.close_session(
            user.user_id, session["session_id"], at + len(session["turns"]) * MINUTE_US
        )
        last_day = session["day"]
    return last_day


async def returning(user: User, day: float, session_id: str) -> bundle_pb2.ContextBundle:
    response = await user.brief("hi", NOW_US + int(day * DAY_US), session_id)
    assert response.bundle.mode == START
    return response.bundle


def bullets(bundle: bundle_pb2.ContextBundle) -> list[str]:
    lines = bundle.episode_bridge.split("\n")
    assert lines[0] == HEADER, bundle.episode_bridge
    return lines[1:]


async def test_the_topic_becomes_one_thread_with_its_decisions(user: User) -> None:
    last_day = await replay(user)
    async with engine_channel(user.mesh.addrs["thread_store"], INTERNAL_TOKEN, 5.0) as channel:
        resumed = await thread_grpc.ThreadStoreServiceStub(channel).Resume(
            thread_pb.ResumeRequest(
                scope=user.scope, session_id="s-later", now=timestamp_of(NOW_US + last_day * DAY_US)
            )
        )
    spans = [tuple(candidate.session_ids) for candidate in resumed.candidates]
    assert spans == [tuple(EXPECTED["topic_sessions"]), tuple(EXPECTED["alone"])]
    topic = resumed.candidates[0]
    said = [decision.lower() for decision in topic.last_decisions]
    for phrase in EXPECTED["decisions"]:
        assert any(phrase in decision for decision in said), (phrase, said)
    assert all(word in topic.title.lower() for word in EXPECTED["topic_words"])


async def test_a_hot_return_gets_one_to_three_bullets_of_the_topic(user: User) -> None:
    last_day = await replay(user)
    bundle = await returning(user, last_day + 2, "s-hot")
    lines = bullets(bundle)
    assert 1 <= len(lines) <= 3 and all(line.startswith("- ") for line in lines)
    text = "\n".join(lines).lower()
    # The newest session's next step and the open question of the one before: one thread.
    assert "backsplash" in text and "permit" in text
    assert "porto" not in text and not bundle.HasField("clarification")


async def test_a_warm_return_gets_exactly_the_one_question_naming_the_topic(
    user: User,
) -> None:
    last_day = await replay(user)
    bundle = await returning(user, last_day + 10, "s-warm")
    assert bundle.episode_bridge == ""
    match = QUESTION.match(bundle.clarification.text)
    assert match, bundle.clarification.text
    assert all(word in match.group(1).lower() for word in EXPECTED["topic_words"])


async def test_a_cold_topic_appears_only_after_resume_the_thread_about_it(user: User) -> None:
    last_day = await replay(user)
    back = NOW_US + (last_day + 40) * DAY_US
    bundle = await returning(user, last_day + 40, "s-cold")
    assert bundle.episode_bridge == "" and not bundle.HasField("clarification")
    asked = f"Can we resume the thread about {EXPECTED['resume_topic']}?"
    said = await user.say(asked, back + 1, "s-cold")
    assert said.command == "RESUME_THREAD"
    carried = (await user.brief("ok, where were we", back + MINUTE_US, "s-cold")).bundle
    text = "\n".join(bullets(carried)).lower()
    assert "backsplash" in text and "porto" not in text


async def test_remember_everything_said_in_a_turn_gives_richer_thread_digests(
    user: User,
) -> None:
    heard = await user.say("Remember everything going forward.", NOW_US, "s-paint")
    assert heard.command == "REMEMBER_EVERYTHING"
    rooms = ("blue", "green", "grey", "white", "yellow", "red", "black")
    for n, colour in enumerate(rooms, 1):
        text = f"We decided to paint room {n} {colour}."
        await user.say(text, NOW_US + n * MINUTE_US, "s-paint")
    # The ThreadStore hears the mode through the extractor's outbox; a close after it
    # keeps every decision (the default keeps five).
    for _ in range(50):
        await user.gateway.close_session(user.user_id, "s-paint", NOW_US + 9 * MINUTE_US)
        async with engine_channel(user.mesh.addrs["thread_store"], INTERNAL_TOKEN, 5.0) as channel:
            resumed = await thread_grpc.ThreadStoreServiceStub(channel).Resume(
                thread_pb.ResumeRequest(
                    scope=user.scope, session_id="s-next", now=timestamp_of(NOW_US + DAY_US)
                )
            )
        if len(resumed.candidates[0].last_decisions) == len(rooms):
            break
        await asyncio.sleep(0.1)
    assert len(resumed.candidates[0].last_decisions) == len(rooms)
