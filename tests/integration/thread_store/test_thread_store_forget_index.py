"""Forgetting a thread removes its turns and digest from the retrieval index too."""

from __future__ import annotations

from pathlib import Path

import grpc
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


def turn(turn_id: str, session_id: str, text: str, offset_s: int) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn_id, session_id=session_id, role=memory_pb2.ROLE_USER, text=text, time=timestamp_of(START_US + offset_s * 1_000_000)
    )


async def test_forget_thread_removes_its_index_copies_and_keeps_other_threads(tmp_path: Path) -> None:
    mesh = await start_in_process(["retrieval_ranker", "thread_store"], tmp_path)
    scope = new_scope()
    try:
        threads = pb_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
        ranker = ranker_grpc.RetrievalRankerServiceStub(mesh.channel("retrieval_ranker"))
        turns = [
            turn("t1", "secret-session", "my surprise party plan for Lucia is at the lighthouse", 0),
            turn("t2", "secret-session", "the lighthouse party needs balloons", 30),
            turn("t3", "other-session", "the lighthouse tour was lovely", 7200),
        ]
        for item in turns:
            await threads.AppendTurn(pb.AppendTurnRequest(scope=scope, turn=item))
        documents = [
            ranker_pb.Document(doc_id=t.turn_id, kind=ranker_pb.DOCUMENT_KIND_TURN, text=t.text, turn=t, time=t.time) for t in turns
        ]
        documents.append(
            ranker_pb.Document(doc_id="secret-session", kind=ranker_pb.DOCUMENT_KIND_DIGEST, text="Lighthouse party for Lucia", time=turns[1].time)
        )
        await ranker.Upsert(ranker_pb.UpsertRequest(scope=scope, documents=documents))

        forgotten = await threads.ForgetThread(pb.ForgetThreadRequest(scope=scope, thread_id="secret-session", now=turns[2].time))
        assert forgotten.forgotten

        found = await ranker.Retrieve(
            ranker_pb.RetrieveRequest(
                scope=scope, query="lighthouse party", now=turns[2].time, caps=ranker_pb.RetrieveCaps(max_atoms=20, max_turns=10, max_digests=5)
            )
        )
        ids = {c.document.doc_id for c in [*found.turns, *found.digests]}
        assert ids == {"t3"}
    finally:
        await mesh.stop()


async def test_forget_thread_fails_retryably_and_forgets_nothing_while_the_index_is_down(tmp_path: Path) -> None:
    mesh = await start_in_process(["thread_store"], tmp_path, retrieval_ranker_addr="127.0.0.1:9")
    scope = new_scope()
    try:
        threads = pb_grpc.ThreadStoreServiceStub(mesh.channel("thread_store"))
        item = turn("t1", "s1", "remember the lighthouse", 0)
        await threads.AppendTurn(pb.AppendTurnRequest(scope=scope, turn=item))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await threads.ForgetThread(pb.ForgetThreadRequest(scope=scope, thread_id="s1", now=item.time))
        assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
        archive = await threads.ListArchive(pb.ListArchiveRequest(scope=scope))
        assert [t.turn_id for t in archive.turns] == ["t1"]
    finally:
        await mesh.stop()
