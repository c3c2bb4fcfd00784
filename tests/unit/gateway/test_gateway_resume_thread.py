"""'Resume the thread about <topic>' in the gateway: the ThreadStore's answer is kept per
session for the next Brief, which clears it once carried; a bad topic is refused naming
`target`; a cache outage costs the hand-over, never the command."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.gateway.resume import ThreadResumer
from memmesh.errors import InvalidInput
from memmesh.runtime.timeconv import timestamp_of
from memmesh.storage.cache import MemoryCache
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

SCOPE = scope_pb2.UserScope(tenant_id="t1", user_id="u1")
NOW = timestamp_of(1_767_225_600_000_000)


@dataclass
class Threads:
    """The ThreadStore's ResumeThread over fixed threads by title word."""

    threads: dict[str, str] = field(default_factory=lambda: {"shed": "s-shed"})
    asked: list[thread_pb.ResumeThreadRequest] = field(default_factory=list)

    async def resume_thread(
        self, request: thread_pb.ResumeThreadRequest, timeout_s: float
    ) -> thread_pb.ResumeThreadResponse:
        self.asked.append(request)
        found = next((t for word, t in self.threads.items() if word in request.topic), None)
        if found is None:
            return thread_pb.ResumeThreadResponse(found=False)
        return thread_pb.ResumeThreadResponse(
            found=True, digest=memory_pb2.Digest(thread_id=found), left_off=["Next step: x"]
        )


class BrokenCache(MemoryCache):
    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        raise ConnectionError("cache down")


async def test_the_thread_found_is_handed_to_the_sessions_next_brief_once() -> None:
    threads, cache = Threads(), MemoryCache()
    resumer = ThreadResumer(threads, cache)
    found = await resumer.resume(SCOPE, "s-now", "  the garden   shed ", NOW, 1.0)
    assert found.found and threads.asked[0].topic == "the garden shed"
    assert threads.asked[0].session_id == "s-now"
    assert await resumer.requested(SCOPE, "s-now") == "s-shed"
    assert await resumer.requested(SCOPE, "s-other") == ""
    other_user = scope_pb2.UserScope(tenant_id="t1", user_id="u2")
    assert await resumer.requested(other_user, "s-now") == ""
    await resumer.carried(SCOPE, "s-now")
    assert await resumer.requested(SCOPE, "s-now") == ""


async def test_no_thread_about_the_topic_hands_nothing_over() -> None:
    resumer = ThreadResumer(Threads(), MemoryCache())
    assert not (await resumer.resume(SCOPE, "s-now", "tax forms", NOW, 1.0)).found
    assert await resumer.requested(SCOPE, "s-now") == ""


@pytest.mark.parametrize("topic", ["", "   ", "x" * 201])
async def test_a_missing_or_long_topic_is_refused_naming_target(topic: str) -> None:
    threads = Threads()
    with pytest.raises(InvalidInput) as refused:
        await ThreadResumer(threads, MemoryCache()).resume(SCOPE, "s-now", topic, NOW, 1.0)
    assert "target" in str(refused.value) and not threads.asked


async def test_a_cache_outage_keeps_the_command() -> None:
    resumer = ThreadResumer(Threads(), BrokenCache())
    assert (await resumer.resume(SCOPE, "s-now", "shed", NOW, 1.0)).found
    assert await resumer.requested(SCOPE, "s-now") == ""
