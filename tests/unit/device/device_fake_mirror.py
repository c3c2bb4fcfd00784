"""A fake OutboxSync for device tests: the server's dedupe and head rules in memory, plus failure injection."""

from __future__ import annotations

import grpc

from memmesh.engines.outbox_sync.domain.mirror import (
    Head,
    MirrorItem,
    PushBatch,
    StoredItem,
    plan_push,
)
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as pb
from memmesh.runtime.timeconv import micros_of, timestamp_of


class SimulatedCrash(BaseException):
    """The device process dies (raised where the device would be killed)."""


def unavailable() -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "down"
    )


class FakeMirror:
    """Implements the SyncClient port in memory, with the engine's own plan_push."""

    def __init__(self) -> None:
        self.items: list[StoredItem] = []
        self.heads: dict[tuple[str, str], Head] = {}
        self.push_calls = 0
        # Each push pops one entry: None answers, an exception is raised before storing,
        # "crash_after_store" stores and then kills the device before it sees the reply.
        self.script: list[object] = []

    async def Push(self, request: pb.PushRequest) -> pb.PushResponse:
        self.push_calls += 1
        step = self.script.pop(0) if self.script else None
        if isinstance(step, BaseException):
            raise step
        batch = PushBatch(
            request.device_id,
            [
                MirrorItem(
                    i.item_id,
                    i.item_kind,
                    i.logical_key,
                    i.version,
                    i.tombstone,
                    i.ciphertext,
                    micros_of(i.create_time),
                )
                for i in request.items
            ],
            request.retry_count,
            micros_of(request.now),
        )
        by_id = {s.item.item_id: (s.cursor, s.item.content_hash()) for s in self.items}
        plan = plan_push(len(self.items), batch, by_id, self.heads)
        self.items.extend(plan.inserts)
        self.heads.update({(h.item_kind, h.logical_key): h for h in plan.heads})
        if step == "crash_after_store":
            raise SimulatedCrash()
        return pb.PushResponse(
            acks=[
                pb.PushAck(item_id=a.item_id, cursor=a.cursor, duplicate=a.duplicate)
                for a in plan.acks
            ]
        )

    @staticmethod
    def _message(stored: StoredItem) -> pb.OutboxItem:
        i = stored.item
        return pb.OutboxItem(
            item_id=i.item_id,
            item_kind=i.item_kind,
            logical_key=i.logical_key,
            version=i.version,
            tombstone=i.tombstone,
            ciphertext=i.ciphertext,
            create_time=timestamp_of(i.create_time_us),
            cursor=stored.cursor,
        )

    async def Pull(self, request: pb.PullRequest) -> pb.PullResponse:
        after = [s for s in self.items if s.cursor > request.after_cursor][: request.limit or 500]
        return pb.PullResponse(
            items=[self._message(s) for s in after],
            next_cursor=after[-1].cursor if after else request.after_cursor,
        )

    async def Restore(self, request: pb.RestoreRequest) -> pb.RestoreResponse:
        winners = sorted(h.cursor for h in self.heads.values())
        return pb.RestoreResponse(
            items=[self._message(self.items[c - 1]) for c in winners], cursor=len(self.items)
        )
