"""Use cases of Current State: get, apply (ledger first, then projection), rebuild.

A "fill empty profile" change is decided by the fold itself (domain `fills`): it sets a
given field only while it is empty at its place in the user's ledger stream, so the live
projection and a rebuild agree. It is recorded only when the projection still lacks one
of its fields; otherwise Apply answers `unchanged` and writes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from memmesh.engines.current_state.domain.state import (
    Change,
    UserState,
    apply_change,
    checksum,
    decode_state,
    encode_state,
    fills,
    validate_change,
)
from memmesh.engines.current_state.ports import StateLedger, StateStore, WorkOrderStore
from memmesh.errors import VersionMismatch
from memmesh.storage.cache import Cache, user_key

CACHE_TTL_S = 300
# Bounded retries of the compare-and-set when other processes project the same user.
MAX_PROJECTION_ATTEMPTS = 8


@dataclass(frozen=True)
class Applied:
    state: UserState
    duplicate: bool
    # A fill that found every given field already set: nothing recorded, version unchanged.
    unchanged: bool = False


@dataclass(frozen=True)
class Rebuilt:
    state: UserState
    checksum: str
    live_checksum: str
    events_replayed: int


class CurrentStateService:
    """Keeps the projection equal to the fold of the user's state events on the ledger."""

    def __init__(
        self,
        store: StateStore,
        ledger: StateLedger,
        cache: Cache,
        work_orders: WorkOrderStore | None = None,
    ) -> None:
        self._store = store
        self._ledger = ledger
        self._cache = cache
        # Forget everything about me takes the user's work orders (their titles) too.
        self._work_orders = work_orders

    async def get(self, tenant_id: str, user_id: str) -> UserState:
        """Read through the cache; fills never overwrite a newer write (set-if-absent)."""
        key = user_key(tenant_id, user_id, "state")
        cached = await self._cache.get(key)
        if cached is not None:
            return decode_state(cached.decode())
        state = await self._store.get(tenant_id, user_id) or UserState()
        await self._cache.add(key, encode_state(state).encode(), CACHE_TTL_S)
        return state

    async def apply(
        self,
        tenant_id: str,
        user_id: str,
        change: Change,
        *,
        expected_version: int | None,
        reason_code: str,
        idempotency_key: str,
        now_us: int,
    ) -> Applied:
        """Append the change to the ledger, then project it (with any events not yet projected)."""
        validate_change(change)
        state = await self._store.get(tenant_id, user_id) or UserState()
        if expected_version is not None and expected_version != state.version:
            raise VersionMismatch(f"state is at version {state.version}, not {expected_version}")
        if change.kind == "fill_profile" and not fills(state, change):
            # A field once set is never emptied, so this holds at every later point of the stream;
            # a fill racing another one is recorded, and the fold sets only what is still empty.
            return Applied(state, duplicate=False, unchanged=True)
        # The append is conditional on the user's last state event being the one this
        # projection has folded up to. Holding, the change is exactly the next state event
        # and is folded here with no Read of the stream; the ledger checks it under the
        # stream's write lock, so another apply racing from the same version finds the head
        # moved and catches up, and whichever saves second (compare-and-set on version) starts
        # again from the stored state: no event is ever hidden. Other engines' events in
        # between do not matter, only state events do.
        appended = await self._ledger.append_change(
            tenant_id,
            user_id,
            change,
            reason_code,
            f"state:{idempotency_key}",
            now_us,
            after_sequence=state.ledger_sequence,
        )
        sequence, direct = appended.sequence, appended.follows
        if change.kind == "forget_profile" and self._work_orders is not None:
            await self._work_orders.forget_user(tenant_id, user_id)
        if sequence <= state.ledger_sequence:
            return Applied(state, duplicate=True)
        for _ in range(MAX_PROJECTION_ATTEMPTS):
            if direct:
                caught_up, direct = apply_change(state, change, sequence), False
            else:
                caught_up = await self._catch_up(tenant_id, user_id, state)
            if await self._store.save(
                tenant_id, user_id, caught_up, expected_version=state.version
            ):
                await self._cache.set(
                    user_key(tenant_id, user_id, "state"),
                    encode_state(caught_up).encode(),
                    CACHE_TTL_S,
                )
                return Applied(caught_up, duplicate=False)
            # Another process projected first: start again from what it stored.
            state = await self._store.get(tenant_id, user_id) or UserState()
            if state.ledger_sequence >= sequence:
                await self._cache.delete(user_key(tenant_id, user_id, "state"))
                return Applied(state, duplicate=False)
        raise VersionMismatch("state kept moving; retry")

    async def _catch_up(self, tenant_id: str, user_id: str, state: UserState) -> UserState:
        async for record in self._ledger.read_changes(tenant_id, user_id, state.ledger_sequence):
            state = apply_change(state, record.change, record.sequence)
        return state

    async def rebuild(self, tenant_id: str, user_id: str, replace_live: bool) -> Rebuilt:
        """Fold the user's whole ledger stream into a fresh state."""
        live = await self._store.get(tenant_id, user_id) or UserState()
        rebuilt, replayed = UserState(), 0
        async for record in self._ledger.read_changes(tenant_id, user_id, 0):
            rebuilt = apply_change(rebuilt, record.change, record.sequence)
            replayed += 1
        if replace_live and checksum(rebuilt) != checksum(live):
            await self._store.replace(tenant_id, user_id, rebuilt)
            await self._cache.delete(user_key(tenant_id, user_id, "state"))
        return Rebuilt(rebuilt, checksum(rebuilt), checksum(live), replayed)
