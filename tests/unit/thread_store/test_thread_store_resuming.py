"""Session-start resumes keep what a user's rows gave under the user's data version: a
repeated resume reads only the version, a new version reads the rows again, and at most
the configured number of users is kept."""

from __future__ import annotations

from typing import cast

from memmesh.engines.thread_store.domain.model import (
    Digest,
    DigestHead,
    SessionRow,
    ThreadReflection,
)
from memmesh.engines.thread_store.domain.resume import DAY_US
from memmesh.engines.thread_store.domain.topics import TopicRow
from memmesh.engines.thread_store.ports import UserTx
from memmesh.engines.thread_store.resuming import Resumes

T0 = 1_767_225_600_000_000


def digest(thread_id: str, day: int, summary: str) -> Digest:
    return Digest(thread_id, thread_id.title(), summary, (), (), "", (), T0 + day * DAY_US)


class FakeTx:
    """The reads a resume makes, over one user's closed sessions, each its own thread;
    every read is recorded."""

    def __init__(self) -> None:
        self.version = 1
        self.stored = {
            "a": digest("a", 0, "We planned the Lisbon trip."),
            "b": digest("b", 1, "Kwame teaches me the piano."),
        }
        self.reads: list[str] = []

    async def data_version(self) -> int:
        self.reads.append("data_version")
        return self.version

    async def recent_sessions(self, limit: int) -> list[SessionRow]:
        self.reads.append("recent_sessions")
        ordered = sorted(self.stored.values(), key=lambda d: -d.update_us)[:limit]
        return [
            SessionRow(d.thread_id, d.update_us, d.update_us, 1, d.summary, True) for d in ordered
        ]

    async def topic_members(self) -> dict[str, str]:
        self.reads.append("topic_members")
        return {thread_id: thread_id for thread_id in self.stored}

    async def topic_rows(self) -> dict[str, TopicRow]:
        self.reads.append("topic_rows")
        return {thread_id: TopicRow(thread_id) for thread_id in self.stored}

    async def digest_heads(self) -> list[DigestHead]:
        self.reads.append("digest_heads")
        return [
            DigestHead(d.thread_id, d.update_us, False, 0, 0, False)
            for d in sorted(self.stored.values(), key=lambda d: (d.update_us, d.thread_id))
        ]

    async def remembers_everything(self) -> bool:
        self.reads.append("remembers_everything")
        return False

    async def digests_of(self, thread_ids: list[str]) -> dict[str, Digest]:
        self.reads.append("digests_of")
        return {t: self.stored[t] for t in thread_ids if t in self.stored}

    async def reflections_of(self, topic_ids: list[str]) -> dict[str, ThreadReflection]:
        self.reads.append("reflections_of")
        return {}


async def test_a_repeated_session_start_reads_only_the_data_version() -> None:
    resumes, tx = Resumes(), FakeTx()
    first = await resumes.resume(cast(UserTx, tx), ("t", "u"), "next", T0 + 2 * DAY_US)
    assert [c.thread_id for c in first.candidates] == ["b", "a"]
    assert first.episode_bridge == "Kwame teaches me the piano."
    tx.reads.clear()
    again = await resumes.resume(cast(UserTx, tx), ("t", "u"), "next", T0 + 20 * DAY_US)
    assert tx.reads == ["data_version"]
    assert again.candidates == first.candidates and (first.tier, again.tier) == ("HOT", "WARM")


async def test_a_new_data_version_reads_the_rows_again() -> None:
    resumes, tx = Resumes(), FakeTx()
    await resumes.resume(cast(UserTx, tx), ("t", "u"), "next", T0 + 2 * DAY_US)
    del tx.stored["b"]
    tx.version += 1
    resumed = await resumes.resume(cast(UserTx, tx), ("t", "u"), "next", T0 + 2 * DAY_US)
    assert [c.thread_id for c in resumed.candidates] == ["a"]
    assert resumed.episode_bridge == "We planned the Lisbon trip."


async def test_a_write_that_came_during_a_resume_is_read_by_the_next_one() -> None:
    resumes, tx = Resumes(), FakeTx()
    reads = tx.digest_heads

    async def written_meanwhile() -> list[DigestHead]:
        tx.version += 1
        return await reads()

    tx.digest_heads = written_meanwhile  # type: ignore[method-assign]
    await resumes.resume(cast(UserTx, tx), ("t", "u"), "next", T0)
    tx.digest_heads = reads  # type: ignore[method-assign]
    tx.reads.clear()
    await resumes.resume(cast(UserTx, tx), ("t", "u"), "next", T0)
    assert "digest_heads" in tx.reads


async def test_at_most_the_configured_users_are_kept_and_an_erasure_lets_go() -> None:
    resumes, tx = Resumes(kept_users=1), FakeTx()
    for who in (("t", "u1"), ("t", "u2"), ("t", "u1")):
        tx.reads.clear()
        await resumes.resume(cast(UserTx, tx), who, "next", T0)
        assert "digest_heads" in tx.reads
    tx.reads.clear()
    await resumes.resume(cast(UserTx, tx), ("t", "u1"), "next", T0)
    assert tx.reads == ["data_version"]
    resumes.drop(("t", "u1"))
    await resumes.resume(cast(UserTx, tx), ("t", "u1"), "next", T0)
    assert "digest_heads" in tx.reads
    nothing = Resumes(kept_users=0)
    for _ in range(2):
        tx.reads.clear()
        await nothing.resume(cast(UserTx, tx), ("t", "u"), "next", T0)
        assert "digest_heads" in tx.reads
