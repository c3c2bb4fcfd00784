"""Episode digests over gRPC: a closed session emits them and indexes them itself, the
forgetting the thread removes them from the store and the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from memmesh.common.v1 import memory_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.in_process import start_in_process
from memmesh.testing.scopes import new_scope
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

START_US = 1_767_225_600_000_000
SECRET = [
    "My surprise party plan for Lucia is at the lighthouse on Friday.",
    "A lighthouse party for Lucia sounds wonderful, who is coming?",
    "Her brother Mateo brings the cake and the lighthouse keeper lends chairs.",
    "Mateo and the lighthouse keeper, lovely. Balloons too?",
    "Blue balloons, Lucia loves blue. Mateo hides them at the lighthouse.",
    "Blue balloons at the lighthouse then.",
    "I also renewed my passport at the embassy in Madrid.",
    "The Madrid embassy passport renewal is done, good.",
]
OTHER = [
    "The lighthouse tour with my cousin Ines was lovely.",
    "Ines enjoyed the lighthouse tour too.",
]


def turns_of(session_id: str, texts: list[str], offset_s: int) -> list[memory_pb2.Turn]:
    return [
        memory_pb2.Turn(
            turn_id=f"{session_id}-t{i}", session_id=session_id,
            role=memory_pb2.ROLE_USER if i % 2 == 0 else memory_pb2.ROLE_ASSISTANT, text=text,
            time=timestamp_of(START_US + (offset_s + 30 * i) * 1_000_000),
        )
        for i, text in enumerate(texts)
    ]  # fmt: skip


@pytest.fixture(params=["sqlite", "postgres"])
def storage(request: pytest.FixtureRequest) -> dict[str, str]:
    return (
        {}
        if request.param == "sqlite"
        else {"storage_url": request.getfixturevalue("postgres_url")}
    )


async def test_forgotten_thread_takes_its_episodes_out_of_store_and_index(
    tmp_path: Path, storage: dict[str, str]
) -> None:
    mesh = await start_in_process(["retrieval_ranker", "thread_store"], tmp_path, **storage)
    scope = new_scope()
    try:
        threads = pb_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
        ranker = ranker_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
        indexed: set[str] = set()
        for session_id, texts, offset in (("secret", SECRET, 0), ("other", OTHER, 7200)):
            for item in turns_of(session_id, texts, offset):
                await threads.AppendTurn(pb.AppendTurnRequest(scope=scope, turn=item))
            closed = await threads.CloseSession(
                pb.CloseSessionRequest(
                    scope=scope,
                    session_id=session_id,
                    now=timestamp_of(START_US + (offset + 600) * 1_000_000),
                )
            )
            assert closed.episodes and all(e.thread_id == session_id for e in closed.episodes)
            assert [e.episode_id for e in closed.episodes] == [
                f"{session_id}#e{n}" for n in range(1, len(closed.episodes) + 1)
            ]
            indexed |= {closed.digest.thread_id, *(e.episode_id for e in closed.episodes)}
        secret_episodes = {doc_id for doc_id in indexed if doc_id.startswith("secret#e")}
        assert len(secret_episodes) >= 2
        # The ThreadStore indexed the digests and episodes of both closed sessions itself.
        described = await ranker.DescribeIndex(ranker_pb.DescribeIndexRequest(scope=scope))
        assert described.digest_count == len(indexed) and described.turn_count == len(SECRET) + len(
            OTHER
        )
        # A copy left from an earlier, longer segmentation of the same thread.
        stale = memory_pb2.Digest(
            thread_id="secret", episode_id="secret#e9", title="Lighthouse party"
        )
        await ranker.Upsert(
            ranker_pb.UpsertRequest(scope=scope, documents=[ranker_pb.Document(digest=stale)])
        )

        caps = ranker_pb.RetrieveCaps(max_atoms=20, max_turns=10, max_digests=20)
        now = timestamp_of(START_US + 9000 * 1_000_000)
        before = await ranker.Retrieve(
            ranker_pb.RetrieveRequest(
                scope=scope, query="lighthouse party balloons Mateo", now=now, caps=caps
            )
        )
        found = {c.doc_id: c.document for c in before.digests}
        assert secret_episodes & set(found)
        assert all(found[i].digest.thread_id == "secret" for i in secret_episodes & set(found))

        forgotten = await threads.ForgetThread(
            pb.ForgetThreadRequest(scope=scope, thread_id="secret", now=now)
        )
        assert forgotten.forgotten

        after = await ranker.Retrieve(
            ranker_pb.RetrieveRequest(
                scope=scope, query="lighthouse party balloons Mateo passport", now=now, caps=caps
            )
        )
        left = {c.doc_id for c in after.digests}
        assert not any(doc_id == "secret" or doc_id.startswith("secret#") for doc_id in left)
        assert any(doc_id.startswith("other#e") for doc_id in left)
        gone = await threads.CloseSession(
            pb.CloseSessionRequest(scope=scope, session_id="secret", now=now)
        )
        assert not gone.digest.thread_id and not gone.episodes
        kept = await threads.CloseSession(
            pb.CloseSessionRequest(scope=scope, session_id="other", now=now)
        )
        assert kept.episodes and {e.thread_id for e in kept.episodes} == {"other"}
    finally:
        await mesh.stop()
