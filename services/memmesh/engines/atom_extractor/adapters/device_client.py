"""OutboxSync as the AtomExtractor's DevicePort: a forget reaches every device's copy."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.atom_extractor.mapping import scope_message
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as sync_pb
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as sync_grpc
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of


class GrpcDevices:
    def __init__(self, stub: sync_grpc.OutboxSyncServiceStub) -> None:
        self._stub = stub

    async def forget_items(
        self, tenant_id: str, user_id: str, item_kind: str, keys: Sequence[str], now_us: int
    ) -> None:
        request = sync_pb.ForgetItemsRequest(
            scope=scope_message(tenant_id, user_id),
            item_kind=item_kind,
            logical_keys=list(keys),
            now=timestamp_of(now_us),
        )
        await call_engine("outbox_sync", self._stub.ForgetItems(request))

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        request = sync_pb.ForgetUserRequest(
            scope=scope_message(tenant_id, user_id), now=timestamp_of(now_us)
        )
        await call_engine("outbox_sync", self._stub.ForgetUser(request))
