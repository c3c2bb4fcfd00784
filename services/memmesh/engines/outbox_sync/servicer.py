"""gRPC adapter of the mirror: proto in, one use-case call, proto out."""

from __future__ import annotations

import grpc

from memmesh.engines.outbox_sync import mapping
from memmesh.engines.outbox_sync.use_cases import OutboxSyncService
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as pb_grpc
from memmesh.runtime.timeconv import micros_of


class OutboxSyncServicer(pb_grpc.OutboxSyncServiceServicer):
    def __init__(self, service: OutboxSyncService) -> None:
        self._service = service

    async def Push(
        self, request: pb.PushRequest, context: grpc.aio.ServicerContext
    ) -> pb.PushResponse:
        acks = await self._service.push(
            request.scope.tenant_id, request.scope.user_id, mapping.push_batch(request)
        )
        return pb.PushResponse(acks=[mapping.ack_message(ack) for ack in acks])

    async def Pull(
        self, request: pb.PullRequest, context: grpc.aio.ServicerContext
    ) -> pb.PullResponse:
        result = await self._service.pull(
            request.scope.tenant_id, request.scope.user_id, request.after_cursor, request.limit
        )
        return pb.PullResponse(
            items=[mapping.item_message(s) for s in result.items], next_cursor=result.next_cursor
        )

    async def Restore(
        self, request: pb.RestoreRequest, context: grpc.aio.ServicerContext
    ) -> pb.RestoreResponse:
        page = await self._service.restore(
            request.scope.tenant_id,
            request.scope.user_id,
            request.device_id,
            micros_of(request.now),
            request.page_token,
            request.page_size,
        )
        return pb.RestoreResponse(
            items=[mapping.item_message(s) for s in page.items],
            cursor=page.as_of_cursor,
            next_page_token=page.next_page_token,
        )

    async def ForgetItems(
        self, request: pb.ForgetItemsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetItemsResponse:
        count = await self._service.forget_items(
            request.scope.tenant_id,
            request.scope.user_id,
            request.item_kind,
            sorted(set(request.logical_keys)),
            micros_of(request.now),
        )
        return pb.ForgetItemsResponse(tombstone_count=count)

    async def ForgetUser(
        self, request: pb.ForgetUserRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetUserResponse:
        count = await self._service.forget_user(
            request.scope.tenant_id, request.scope.user_id, micros_of(request.now)
        )
        return pb.ForgetUserResponse(tombstone_count=count)
