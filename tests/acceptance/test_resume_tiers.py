"""Resume tiers (seed 001 §2.21, §2.21A) through the gateway over real engine processes: a
return within 72 h gets "where we left off" in 1-3 bullets, within 30 days exactly the one
question, later nothing unless asked. The gateway's `now` places the sessions in time."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from acceptance_mesh import DAY_US, MINUTE_US, NOW_US, TENANT, TENANT_KEY, User, running_mesh

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import bundle_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.runtime.supervisor import Mesh

START = bundle_pb2.SESSION_MODE_SESSION_START
HEADER = "Where we left off:"
# A request that needs the daughter's name without asking what is remembered.
PARTY = "any ideas for my daughter's birthday party?"
QUESTION = re.compile(r"^Do you want to resume (.+) or start something new\?$")


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "resume_tiers")


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        yield User(mesh, gateway)


async def shed_session(user: User, session_id: str = "s-shed", at_us: int = NOW_US) -> None:
    """A conversation about the garden shed with a next step and an open question."""
    await user.say("I'm building a garden shed behind the apple tree.", at_us, session_id)
    await user.say(
        "Remind me to order the cedar boards for the shed.", at_us + MINUTE_US, session_id
    )
    await user.say("Which roof felt lasts longest on a shed?", at_us + 2 * MINUTE_US, session_id)
    await user.gateway.close_session(user.user_id, session_id, at_us + 3 * MINUTE_US)


def bullets(bundle: bundle_pb2.ContextBundle) -> list[str]:
    lines = bundle.episode_bridge.split("\n")
    assert lines[0] == HEADER, bundle.episode_bridge
    return lines[1:]


async def returning(user: User, days: float, query: str = "hi") -> gateway_pb.BriefResponse:
    response = await user.brief(query, NOW_US + int(days * DAY_US), f"s-back-{days}")
    assert response.bundle.mode == START
    return response


async def test_a_hot_return_gets_one_to_three_bullets_and_no_question(user: User) -> None:
    await shed_session(user)
    bundle = (await returning(user, 2)).bundle
    lines = bullets(bundle)
    assert 1 <= len(lines) <= 3 and all(line.startswith("- ") for line in lines)
    # Built from the thread's fields: its next step and its open question.
    text = "\n".join(lines).lower()
    assert "cedar boards" in text and "roof felt" in text
    assert not bundle.HasField("clarification")


async def test_a_warm_return_gets_exactly_the_one_question_and_no_bullets(user: User) -> None:
    await shed_session(user)
    response = await returning(user, 10)
    bundle = response.bundle
    assert bundle.episode_bridge == ""
    match = QUESTION.match(bundle.clarification.text)
    assert match, bundle.clarification.text
    assert "shed" in match.group(1).lower()
    assert response.counters.clarification_due_to_memory_count == 1


async def test_a_cold_return_surfaces_nothing(user: User) -> None:
    await shed_session(user)
    bundle = (await returning(user, 40)).bundle
    assert bundle.episode_bridge == "" and not bundle.HasField("clarification")
    assert "shed" not in bundle.episode_bridge.lower() + bundle.clarification.text.lower()


async def test_tiers_follow_the_latest_use_of_the_top_thread(user: User) -> None:
    await shed_session(user)
    await user.say("Let's plan the Lisbon trip in May.", NOW_US + 5 * DAY_US, "s-trip")
    await user.gateway.close_session(user.user_id, "s-trip", NOW_US + 5 * DAY_US + MINUTE_US)
    # The shed thread has an open question, so it ranks first; its last use is 6 days old.
    bundle = (await returning(user, 6)).bundle
    assert bundle.episode_bridge == ""
    assert "shed" in QUESTION.match(bundle.clarification.text).group(1).lower()  # type: ignore[union-attr]


async def test_a_cold_thread_surfaces_only_after_resume_the_thread_about_it(user: User) -> None:
    await shed_session(user)
    await user.say("Let's plan the Lisbon trip in May.", NOW_US + 39 * DAY_US, "s-trip")
    await user.gateway.close_session(user.user_id, "s-trip", NOW_US + 39 * DAY_US + MINUTE_US)
    back = NOW_US + 40 * DAY_US
    started = await user.brief("hi", back, "s-back")
    assert "shed" not in started.bundle.episode_bridge.lower()
    assert "shed" not in started.bundle.clarification.text.lower()
    said = await user.say("Can we resume the thread about the garden shed?", back + 1, "s-back")
    assert said.command == "RESUME_THREAD"
    carried = (await user.brief("ok, go on", back + MINUTE_US, "s-back")).bundle
    assert carried.mode != START
    text = "\n".join(bullets(carried)).lower()
    assert "cedar boards" in text and "lisbon" not in text
    # The next Brief of the session goes back to the usual rules.
    after = (await user.brief("thanks", back + 2 * MINUTE_US, "s-back")).bundle
    assert after.episode_bridge == ""
    # The resume was recorded as a use: two days later the shed thread is HOT again.
    later = (await returning(user, 42)).bundle
    assert "cedar boards" in "\n".join(bullets(later)).lower()


async def test_the_resume_thread_command_carries_the_thread_into_the_next_brief(
    user: User,
) -> None:
    await shed_session(user)
    back = NOW_US + 60 * DAY_US
    assert (await user.brief("hi", back, "s-back")).bundle.episode_bridge == ""
    missing = await user.gateway.command(user.user_id, "s-back", "RESUME_THREAD", back, "tax forms")
    assert missing.reason_code == "THREAD_NOT_FOUND"
    assert (await user.brief("and?", back + 1, "s-back")).bundle.episode_bridge == ""
    sent = await user.gateway.command(user.user_id, "s-back", "RESUME_THREAD", back, "garden shed")
    assert sent.reason_code == "USER_COMMAND_RESUME_THREAD"
    carried = (await user.brief("and?", back + 2, "s-back")).bundle
    assert "cedar boards" in "\n".join(bullets(carried)).lower()


async def test_a_resume_command_without_a_topic_is_refused_naming_the_target(user: User) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await user.gateway.command(user.user_id, "s1", "RESUME_THREAD", NOW_US, "  ")
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "target" in (refused.value.details() or "")


@pytest.mark.parametrize("said", ["Don't resume automatically.", "Only resume if I ask."])
async def test_the_resume_preference_changes_surfacing_only(user: User, said: str) -> None:
    await shed_session(user)
    await user.say("My daughter is called Mia.", NOW_US + 4 * MINUTE_US, "s-shed")
    heard = await user.say(said, NOW_US + 5 * MINUTE_US, "s-shed")
    assert heard.command == "RECALL_ONLY_IF_ASKED"
    await user.gateway.close_session(user.user_id, "s-shed", NOW_US + 6 * MINUTE_US)
    # No HOT bullets, no WARM question.
    hot = (await returning(user, 1)).bundle
    assert hot.episode_bridge == "" and not hot.HasField("clarification")
    warm = (await returning(user, 10)).bundle
    assert warm.episode_bridge == "" and not warm.HasField("clarification")
    # Pulled memory is not silenced: a request about the daughter still gets the fact.
    asked = (await returning(user, 11, PARTY)).bundle
    assert any("mia" in atom.text.lower() for atom in asked.atoms), asked.atoms
    # An explicit resume still works.
    back = NOW_US + 12 * DAY_US
    await user.brief("hi", back, "s-later")
    await user.say("Let's resume the thread about the garden shed.", back + 1, "s-later")
    carried = (await user.brief("go on", back + MINUTE_US, "s-later")).bundle
    assert "cedar boards" in "\n".join(bullets(carried)).lower()


async def test_only_recall_if_i_ask_holds_back_resume_surfacing_and_pulled_memory(
    user: User,
) -> None:
    await shed_session(user)
    await user.say("My daughter is called Mia.", NOW_US + 4 * MINUTE_US, "s-shed")
    heard = await user.say("Only recall if I ask.", NOW_US + 5 * MINUTE_US, "s-shed")
    assert heard.command == "RECALL_ONLY_IF_ASKED"
    hot = (await returning(user, 1)).bundle
    assert hot.episode_bridge == "" and not hot.HasField("clarification")
    # Unlike the resume preference, recall itself waits until the user asks for it.
    assert not (await returning(user, 2, PARTY)).bundle.atoms
    # Turning auto-resume off afterwards keeps "only recall if I ask" as it was.
    await user.say("Don't resume automatically.", NOW_US + 3 * DAY_US, "s-later")
    assert not (await returning(user, 4, PARTY)).bundle.atoms


async def test_remember_everything_widens_the_resume_windows_only(user: User) -> None:
    said = await user.say("Remember everything going forward.", NOW_US - DAY_US, "s-pref")
    assert said.command == "REMEMBER_EVERYTHING"
    await shed_session(user)
    # Five days back is WARM by default: with REMEMBER_EVERYTHING it is HOT (7 days).
    five = (await returning(user, 5)).bundle
    assert 1 <= len(bullets(five)) <= 3 and not five.HasField("clarification")
    # Sixty days back is COLD by default: now it gets the one question (WARM to 90 days).
    sixty = await returning(user, 60)
    assert sixty.bundle.episode_bridge == ""
    assert QUESTION.match(sixty.bundle.clarification.text), sixty.bundle.clarification.text
    # Past 90 days nothing surfaces unless asked, as before; the caps are the same.
    assert (await returning(user, 120)).bundle.episode_bridge == ""
    for response in (five, sixty.bundle):
        assert len(response.atoms) <= 20


async def test_without_remember_everything_the_default_windows_hold(user: User) -> None:
    await shed_session(user)
    five = (await returning(user, 5)).bundle
    assert five.episode_bridge == "" and QUESTION.match(five.clarification.text)
    sixty = (await returning(user, 60)).bundle
    assert sixty.episode_bridge == "" and not sixty.HasField("clarification")
