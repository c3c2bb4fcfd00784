"""The learning capsule's per-user data keys as the capsule store's key source: correction
pairs are sealed with the same wrapped data key as the user's learning profile, so shredding
that key ("forget everything about me") leaves every copy of them unreadable."""

from __future__ import annotations

from typing import Protocol

from memmesh.engines.atom_extractor.learning.envelope import Envelope, UserSealer


class DataKeyStore(Protocol):
    async def wrapped_key(
        self, tenant_id: str, user_id: str, new_wrapped: bytes | None
    ) -> bytes | None: ...


class CapsuleKeys:
    def __init__(self, store: DataKeyStore, envelope: Envelope) -> None:
        self._store = store
        self._envelope = envelope

    async def sealer(self, tenant_id: str, user_id: str, create: bool) -> UserSealer | None:
        """The user's sealer; None when they have no data key (never had one, or it was
        shredded) and `create` is false. A key created here is the one the profile uses."""
        wrapped = await self._store.wrapped_key(tenant_id, user_id, None)
        if wrapped is None and create:
            # Only a user with no key yet gets one made (the first writer's stays).
            fresh = self._envelope.new_data_key(tenant_id, user_id)[1]
            wrapped = await self._store.wrapped_key(tenant_id, user_id, fresh)
        if wrapped is None:
            return None
        return UserSealer(self._envelope.unwrap(tenant_id, user_id, wrapped), tenant_id, user_id)
