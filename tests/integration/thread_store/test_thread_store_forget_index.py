"""The ThreadStore feeds the retrieval index itself: the turns it archives and the digests it
closes are indexed, and forgetting a thread removes its turns and digest from the index too."""

from __future__ import annotations

from pathlib import Path

from memmesh.common.v1 import memory_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.in_process import start_in_process
from memmesh.testing.scopes import new_scope
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

START_US = 1_767_225_600_000_000


def turn(turn_id: str, session_id: str, text: str, offset_s: int) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn_id,
        session_id=session_id,
        role=memory_pb2.ROLE_USER,
        text=text,
        time=timestamp_of(START_US + offset_s * 1_000_000),
    )


async def test_forget_thread_removes_its_index_copies_and_keeps_other_threads(
    tmp_path: Path,
) -> None:
    mesh = await start_in_process(["retrieval_ranker", "thread_store"], tmp_path)
    scope = new_scope()
    try:
        threads = pb_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
        ranker = ranker_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
        turns = [
            turn(
                "t1", "secret-session", "my surprise party plan for Lucia is at the lighthouse", 0
            ),
            turn("t2", "secret-session", "the lighthouse party needs balloons", 30),
            turn("t3", "other-session", "the lighthouse tour was lovely", 7200),
        ]
        for item in turns:
            # t3 starts a new session two hours later: the secret session is soft-closed and digested.
            await threads.AppendTurn(pb.AppendTurnRequest(scope=scope, turn=item))
        caps = ranker_pb.RetrieveCaps(max_atoms=20, max_turns=10, max_digests=5)
        query = ranker_pb.RetrieveRequest(
            scope=scope, query="lighthouse party", now=turns[2].time, caps=caps
        )
        found = await ranker.Retrieve(query)
        assert {"t1", "t2", "secret-session"} <= {c.doc_id for c in [*found.turns, *found.digests]}
        described = await ranker.DescribeIndex(ranker_pb.DescribeIndexRequest(scope=scope))
        assert described.turn_count == 3 and described.digest_count >= 1
        digest = next(c.document.digest for c in found.digests if c.doc_id == "secret-session")
        assert list(digest.evidence_turn_ids) and not digest.episode_id

        forgotten = await threads.ForgetThread(
            pb.ForgetThreadRequest(scope=scope, thread_id="secret-session", now=turns[2].time)
        )
        assert forgotten.forgotten

        found = await ranker.Retrieve(query)
        assert {c.doc_id for c in [*found.turns, *found.digests]} == {"t3"}
    finally:
        await mesh.stop()
