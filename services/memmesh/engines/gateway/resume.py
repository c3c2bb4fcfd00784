""" "Resume the thread about <topic>" (seed 001 §2.21A, §2.22), said in a turn or sent as the
RESUME_THREAD command: the ThreadStore finds the thread and records its use, and the next
Brief of the session carries its "where we left off" bullets, whatever its tier. Which
thread the session asked for is a cache entry per session (Redis when configured), so any
gateway replica's next Brief finds it; it expires with the session."""

from __future__ import annotations

from typing import Protocol

from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import scope_pb2
from memmesh.engines.gateway.session_entries import SessionEntry
from memmesh.errors import FieldViolation, InvalidInput
from memmesh.storage.cache import Cache
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

MAX_TOPIC_CHARS = 200


class ThreadResumePeer(Protocol):
    async def resume_thread(
        self, request: thread_pb.ResumeThreadRequest, timeout_s: float
    ) -> thread_pb.ResumeThreadResponse: ...


class ThreadResumer:
    def __init__(self, threads: ThreadResumePeer, cache: Cache) -> None:
        self._threads = threads
        self._asked = SessionEntry(cache, "resume_thread")

    async def resume(
        self,
        scope: scope_pb2.UserScope,
        session_id: str,
        topic: str,
        now: Timestamp,
        timeout_s: float,
    ) -> thread_pb.ResumeThreadResponse:
        """Find the thread the topic names and record its use; the session's next Brief
        carries it. INVALID_ARGUMENT naming `target` for a topic empty or too long."""
        topic = " ".join(topic.split())
        if not topic or len(topic) > MAX_TOPIC_CHARS:
            raise InvalidInput(
                [FieldViolation("target", f"must name the thread (1 to {MAX_TOPIC_CHARS} chars)")]
            )
        found = await self._threads.resume_thread(
            thread_pb.ResumeThreadRequest(scope=scope, topic=topic, now=now, session_id=session_id),
            timeout_s,
        )
        if found.found and session_id:
            # Lost with the cache, the use is still recorded: the thread is HOT and ranks by
            # it on the next start.
            await self._asked.put(scope, session_id, found.digest.thread_id)
        return found

    async def requested(self, scope: scope_pb2.UserScope, session_id: str) -> str:
        """The thread the session asked to resume and no Brief has carried yet, or ''."""
        return await self._asked.get(scope, session_id)

    async def carried(self, scope: scope_pb2.UserScope, session_id: str) -> None:
        """A Brief carried the requested thread: the next one goes back to the usual rules."""
        await self._asked.clear(scope, session_id)
