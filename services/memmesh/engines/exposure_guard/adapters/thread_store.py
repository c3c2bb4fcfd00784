"""The ThreadStore's entity graph as the ExposureGuard's SubjectGraph: the nodes one
co-occurrence edge away from a subject's names are covered with it."""

from __future__ import annotations

from memmesh.common.v1 import scope_pb2
from memmesh.engines.exposure_guard.domain.subject import GRAPH_FAN_OUT, MAX_GRAPH_NODES
from memmesh.runtime.errors import call_engine
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

ENGINE = "thread_store"


class GrpcSubjectGraph:
    def __init__(self, stub: thread_grpc.ThreadStoreServiceStub) -> None:
        self._stub = stub

    async def linked_labels(self, tenant_id: str, user_id: str, node_ids: list[str]) -> list[str]:
        if not node_ids:
            return []
        request = thread_pb.ExpandRequest(
            scope=scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id),
            node_ids=node_ids[:MAX_GRAPH_NODES],
            depth=1,
            fan_out=GRAPH_FAN_OUT,
        )
        reply = await call_engine(ENGINE, self._stub.Expand(request))
        return [node.label for node in reply.nodes if node.label]
