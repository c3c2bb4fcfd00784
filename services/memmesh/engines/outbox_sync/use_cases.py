"""Use cases of the mirror: push (ack only what is stored and on the ledger), pull, restore."""

from __future__ import annotations

from dataclasses import dataclass

from memmesh.engines.outbox_sync.domain.events import received_event, restore_event
from memmesh.engines.outbox_sync.domain.mirror import Ack, PushBatch, StoredItem, within_bytes
from memmesh.engines.outbox_sync.domain.page_token import parse_restore_token, restore_token
from memmesh.engines.outbox_sync.ports import MirrorStore, SyncLedger

DEFAULT_PULL_LIMIT = 500
DEFAULT_RESTORE_PAGE = 1000
# Responses stay well under the 4 MB message cap of every channel.
MAX_RESPONSE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class PullResult:
    items: list[StoredItem]
    next_cursor: int


@dataclass(frozen=True)
class RestorePage:
    """One page of a restore set taken at as_of_cursor."""

    items: list[StoredItem]
    as_of_cursor: int
    next_page_token: str


class OutboxSyncService:
    """The server side of device sync; it stores and serves ciphertext and never acts on it."""

    def __init__(self, store: MirrorStore, ledger: SyncLedger) -> None:
        self._store = store
        self._ledger = ledger

    async def push(self, tenant_id: str, user_id: str, batch: PushBatch) -> list[Ack]:
        """Store a batch idempotently; acks only once its receipt is on the ledger."""
        plan = await self._store.push(tenant_id, user_id, batch)
        # Receipts left by a push whose ledger call failed are recorded by the next push
        # (the device's retry), so every stored batch reaches the ledger exactly once.
        await self._record_receipts(tenant_id, user_id)
        return plan.acks

    async def _record_receipts(self, tenant_id: str, user_id: str) -> None:
        receipts = await self._store.pending_receipts(tenant_id, user_id)
        if not receipts:
            return
        await self._ledger.append(tenant_id, user_id, [received_event(r) for r in receipts])
        await self._store.mark_recorded(tenant_id, user_id, [r.first_cursor for r in receipts])

    async def forget_items(
        self, tenant_id: str, user_id: str, item_kind: str, keys: list[str], now_us: int
    ) -> int:
        """Every device copy of these artifacts becomes a deletion; how many tombstones."""
        plan = await self._store.forget(tenant_id, user_id, item_kind, keys, now_us)
        return len(plan.inserts)

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> int:
        """Every device copy of the user's artifacts becomes a deletion."""
        plan = await self._store.forget(tenant_id, user_id, "", [], now_us)
        return len(plan.inserts)

    async def pull(self, tenant_id: str, user_id: str, after_cursor: int, limit: int) -> PullResult:
        """Items after a cursor in order, bounded by limit and the response size cap."""
        fetched = await self._store.pull(
            tenant_id, user_id, after_cursor, limit or DEFAULT_PULL_LIMIT
        )
        items = within_bytes(fetched, MAX_RESPONSE_BYTES)
        return PullResult(items, items[-1].cursor if items else after_cursor)

    async def restore(
        self,
        tenant_id: str,
        user_id: str,
        device_id: str,
        now_us: int,
        page_token: str,
        page_size: int,
    ) -> RestorePage:
        """One page of the latest continuity set; the first page is recorded on the ledger."""
        if page_token:
            as_of, after = parse_restore_token(
                page_token, await self._store.head_cursor(tenant_id, user_id)
            )
        else:
            as_of, after = await self._store.head_cursor(tenant_id, user_id), 0
            await self._ledger.append(tenant_id, user_id, [restore_event(device_id, as_of, now_us)])
        limit = page_size or DEFAULT_RESTORE_PAGE
        fetched = await self._store.restore_page(tenant_id, user_id, as_of, after, limit)
        items = within_bytes(fetched, MAX_RESPONSE_BYTES)
        more = len(items) < len(fetched) or len(fetched) == limit
        next_token = restore_token(as_of, items[-1].cursor) if more and items else ""
        return RestorePage(items, as_of, next_token)
