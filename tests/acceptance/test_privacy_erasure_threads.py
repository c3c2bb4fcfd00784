"""Forget means forget, on the transcript side (seed 001 §2.11.5, §2.11.11, §2.17 Q16), through
the gateway over real engine processes: once the ThreadStore has redacted or forgotten what
the user said (as the AtomExtractor's erasure plan asks it to), no Brief carries it any
more — not in working memory, the rolling summary, an excerpt, a digest, the episode bridge,
an active loop or an entity — while what was not forgotten is still there.

The bundle parts checked here are the ones built from the transcript; atoms extracted from
the same words are the AtomExtractor's to forget and are left out of these checks.
"""

from __future__ import annotations

import random
import string
import time
from collections.abc import Iterator

import pytest
from acceptance_mesh import (
    INTERNAL_TOKEN,
    MINUTE_US,
    SECOND_US,
    TENANT,
    TENANT_KEY,
    User,
    response_text,
    running_mesh,
)

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import bundle_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as threads_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as threads_grpc

HOUR_US = 60 * MINUTE_US


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    yield from running_mesh(tmp_path_factory, "privacy-erasure-threads")


def _name() -> str:
    return "Z" + "".join(random.choices(string.ascii_lowercase, k=8))


def _transcript_parts(response: gateway_pb.BriefResponse) -> str:
    """The bundle without its atom parts (push memory and atoms), as text."""
    bundle = bundle_pb2.ContextBundle()
    bundle.CopyFrom(response.bundle)
    bundle.ClearField("atoms")
    bundle.ClearField("push")
    return response_text(bundle).casefold()


async def _threads_call(mesh: Mesh, method: str, request: object) -> object:
    channel = engine_channel(mesh.addrs["thread_store"], INTERNAL_TOKEN, 10.0)
    try:
        return await getattr(threads_grpc.ThreadStoreServiceStub(channel), method)(request)
    finally:
        await channel.close()


async def test_excerpt_summary_bridge_and_working_memory_after_redaction(mesh: Mesh) -> None:
    city, friend = _name(), _name()
    start = int(time.time()) * SECOND_US - 6 * HOUR_US
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        user = User(mesh, gateway)
        await user.say(
            f"Good morning. My sister lives in {city}. I love hiking in the hills.", start
        )
        await user.say(f"I need to buy {friend} a present for the hiking club.", start + SECOND_US)
        await user.say("The hiking club meets on Saturdays.", start + 2 * SECOND_US)
        in_session = await user.brief(f"tell me about {city}", start + 3 * SECOND_US)
        assert city.casefold() in _transcript_parts(in_session)
        later = start + 3 * HOUR_US
        resumed = await user.brief(f"what about {city} and {friend}", later, session_id="s2")
        assert city.casefold() in _transcript_parts(resumed)

        # The erasure plan: the sentence that holds the forgotten place, and the whole turn
        # about the friend (no terms: the turn stays as an empty stub).
        scope, now = user.scope, timestamp_of(later)
        await _threads_call(
            mesh,
            "RedactTurns",
            threads_pb.RedactTurnsRequest(
                scope=scope, turn_ids=["t1"], forget_terms=[city], now=now
            ),
        )
        await _threads_call(
            mesh,
            "RedactTurns",
            threads_pb.RedactTurnsRequest(scope=scope, turn_ids=["t2"], now=now),
        )

        in_session = await user.brief(f"tell me about {city}", start + 4 * SECOND_US)
        text = _transcript_parts(in_session)
        assert city.casefold() not in text and friend.casefold() not in text
        assert "sister" not in text
        # What was not forgotten stays: the rest of the first turn and the third one.
        assert "i love hiking in the hills." in text and "saturdays" in text
        for query in (f"what about {city} and {friend}", "sister present", "hiking club"):
            resumed = await user.brief(query, later + SECOND_US, session_id="s3")
            text = _transcript_parts(resumed)
            assert city.casefold() not in text and friend.casefold() not in text, query


async def test_forget_this_conversation_leaves_no_trace_in_later_briefs(mesh: Mesh) -> None:
    secret = _name()
    start = int(time.time()) * SECOND_US - 6 * HOUR_US
    async with GatewayClient(mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT) as gateway:
        user = User(mesh, gateway)
        await user.say(
            f"My doctor {secret} called about the test results.", start, session_id="secret"
        )
        await user.say(
            f"Remind me to call {secret} back tomorrow.", start + SECOND_US, session_id="secret"
        )
        later = start + 3 * HOUR_US
        await user.say("I planted tomatoes in the garden.", later, session_id="open")
        before = await user.brief(f"did {secret} call", later + SECOND_US, session_id="open")
        assert secret.casefold() in _transcript_parts(before)

        forgotten = await _threads_call(
            mesh,
            "ForgetSession",
            threads_pb.ForgetSessionRequest(
                scope=user.scope, session_id="secret", now=timestamp_of(later)
            ),
        )
        assert list(forgotten.turn_ids) == ["t1", "t2"]  # type: ignore[attr-defined]

        for session_id in ("open", "next"):
            after = await user.brief(
                f"did {secret} call about the results", later + 2 * SECOND_US, session_id=session_id
            )
            text = _transcript_parts(after)
            assert secret.casefold() not in text and "doctor" not in text
        assert "tomatoes" in _transcript_parts(
            await user.brief("what did I plant", later + 3 * SECOND_US, session_id="open")
        )
