"""Envelope encryption of learning capsules: each user's capsule is sealed with its own
AES-256-GCM data key, and that key is stored wrapped (AES-GCM) by the tenant's key, derived
from the configured master secret. Deleting the wrapped data key (crypto-shredding) leaves
the user's sealed bytes unreadable for good, wherever copies of them remain."""

from __future__ import annotations

from memmesh.device.crypto import Sealer, associated_data, derive_key, new_key

MASTER_SALT = b"memmesh-learning-master-v1"


class Envelope:
    """Wraps per-user data keys under per-tenant keys and seals capsules with them."""

    def __init__(self, master_secret: bytes) -> None:
        if len(master_secret) < 16:
            raise ValueError("the learning master secret needs at least 16 bytes")
        self._master = master_secret

    def _tenant_sealer(self, tenant_id: str) -> Sealer:
        return Sealer(derive_key(self._master, MASTER_SALT, f"learning-kek:{tenant_id}"))

    def new_data_key(self, tenant_id: str, user_id: str) -> tuple[bytes, bytes]:
        """A fresh data key and its wrapped form (the only form ever stored)."""
        key = new_key()
        wrapped = self._tenant_sealer(tenant_id).seal(
            key, associated_data("learning-data-key", tenant_id, user_id)
        )
        return key, wrapped

    def unwrap(self, tenant_id: str, user_id: str, wrapped: bytes) -> bytes:
        """The data key; IntegrityError for another tenant's or user's wrapped key."""
        return self._tenant_sealer(tenant_id).open(
            wrapped, associated_data("learning-data-key", tenant_id, user_id)
        )

    @staticmethod
    def seal(key: bytes, tenant_id: str, user_id: str, version: int, plaintext: bytes) -> bytes:
        """The capsule bytes, bound to their owner and version."""
        return Sealer(key).seal(plaintext, _binding(tenant_id, user_id, version))

    @staticmethod
    def open(key: bytes, tenant_id: str, user_id: str, version: int, sealed: bytes) -> bytes:
        return Sealer(key).open(sealed, _binding(tenant_id, user_id, version))


def _binding(tenant_id: str, user_id: str, version: int) -> bytes:
    return associated_data("learning-capsule", tenant_id, user_id, version)
