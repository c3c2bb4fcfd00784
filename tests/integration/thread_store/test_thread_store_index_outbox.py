"""The ThreadStore feeds the retrieval index through its own outbox, with real engine
processes: with the RetrievalRanker down, AppendTurn and ForgetThread still succeed, and the
index catches up once the ranker is back (the turn is found; the forgotten one is gone)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

NOW_US = 1_767_225_600 * 1_000_000
TOKEN = MeshSettings().internal_token
CAPS = ranker_pb.RetrieveCaps(max_atoms=0, max_turns=10, max_digests=10)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    data_dir: Path = tmp_path_factory.mktemp("thread-store-index-outbox")
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_THREAD_STORE_INDEX_RETRY_MAX_S": "0.3",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(["retrieval_ranker", "thread_store"], env=env) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def stubs(
    mesh: Mesh,
) -> AsyncIterator[tuple[pb_grpc.ThreadStoreServiceStub, ranker_grpc.RetrievalRankerServiceStub]]:
    async with (
        engine_channel(mesh.addrs["thread_store"], TOKEN) as threads,
        engine_channel(mesh.addrs["retrieval_ranker"], TOKEN) as ranker,
    ):
        yield (
            pb_grpc.ThreadStoreServiceStub(threads),
            ranker_grpc.RetrievalRankerServiceStub(ranker),
        )


def new_scope() -> scope_pb2.UserScope:
    return scope_pb2.UserScope(tenant_id="demo", user_id=f"u-{uuid.uuid4().hex[:10]}")


def turn(turn_id: str, session_id: str, text: str, offset_s: int = 0) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn_id, session_id=session_id, role=memory_pb2.ROLE_USER, text=text,
        time=timestamp_of(NOW_US + offset_s * 1_000_000), exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
    )  # fmt: skip


async def found(
    ranker: ranker_grpc.RetrievalRankerServiceStub, scope: scope_pb2.UserScope, query: str
) -> set[str]:
    request = ranker_pb.RetrieveRequest(
        scope=scope, query=query, now=timestamp_of(NOW_US + 86_400_000_000), caps=CAPS
    )
    reply = await ranker.Retrieve(request, timeout=2.0)
    return {c.doc_id for c in [*reply.turns, *reply.digests]}


async def eventually(check: Callable[[], Awaitable[bool]], timeout_s: float = 20.0) -> None:
    for _ in range(int(timeout_s / 0.2)):
        try:
            if await check():
                return
        except Exception:  # the ranker may still be starting
            pass
        await asyncio.sleep(0.2)
    raise AssertionError("the index did not catch up")


async def test_a_turn_appended_while_the_ranker_is_down_is_indexed_once_it_is_back(
    mesh: Mesh, stubs: tuple[pb_grpc.ThreadStoreServiceStub, ranker_grpc.RetrievalRankerServiceStub]
) -> None:
    threads, ranker = stubs
    scope = new_scope()
    mesh.kill("retrieval_ranker")
    try:
        appended = await threads.AppendTurn(
            pb.AppendTurnRequest(
                scope=scope, turn=turn("t1", "s1", "Our parrot Kiwi sings opera every morning.")
            ),
            timeout=5.0,
        )
        assert not appended.duplicate
    finally:
        await asyncio.to_thread(mesh.start, ["retrieval_ranker"])

    async def indexed() -> bool:
        return "t1" in await found(ranker, scope, "does the parrot sing opera")

    await eventually(indexed)


async def test_a_forget_while_the_ranker_is_down_takes_the_turn_out_once_it_is_back(
    mesh: Mesh, stubs: tuple[pb_grpc.ThreadStoreServiceStub, ranker_grpc.RetrievalRankerServiceStub]
) -> None:
    threads, ranker = stubs
    scope = new_scope()
    await threads.AppendTurn(
        pb.AppendTurnRequest(
            scope=scope, turn=turn("t1", "s1", "The lighthouse party is a secret.")
        )
    )
    # A turn the digest can quote (a secret is text-only: a digest, spoken, never quotes it).
    await threads.AppendTurn(
        pb.AppendTurnRequest(
            scope=scope, turn=turn("t0", "s1", "We planned the lighthouse picnic menu.", 60)
        )
    )
    await threads.AppendTurn(
        pb.AppendTurnRequest(
            scope=scope, turn=turn("t2", "s2", "The lighthouse tour was lovely.", 7200)
        )
    )
    assert {"t0", "t1", "t2"} <= await found(ranker, scope, "lighthouse")
    # s2 started a session: s1 was soft-closed and its digest indexed.
    before = await ranker.DescribeIndex(ranker_pb.DescribeIndexRequest(scope=scope))
    assert (before.turn_count, before.digest_count >= 1) == (3, True)
    mesh.kill("retrieval_ranker")
    try:
        forgotten = await threads.ForgetThread(
            pb.ForgetThreadRequest(
                scope=scope, thread_id="s1", now=timestamp_of(NOW_US + 7300_000_000)
            ),
            timeout=5.0,
        )
        assert forgotten.forgotten
    finally:
        await asyncio.to_thread(mesh.start, ["retrieval_ranker"])

    async def removed() -> bool:
        described = await ranker.DescribeIndex(
            ranker_pb.DescribeIndexRequest(scope=scope), timeout=2.0
        )
        return (described.turn_count, described.digest_count) == (1, 0)

    await eventually(removed)
    assert await found(ranker, scope, "lighthouse") == {"t2"}
