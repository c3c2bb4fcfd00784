"""Envelope encryption of learning capsules: each user's capsule is sealed with its own
AES-256-GCM data key, and that key is stored wrapped (AES-GCM) by the tenant's key, derived
from the configured master secret. Deleting the wrapped data key (crypto-shredding) leaves
the user's sealed bytes unreadable for good, wherever copies of them remain."""

from __future__ import annotations

from memmesh.device.crypto import IntegrityError, Sealer, associated_data, derive_key, new_key

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


class UserSealer:
    """One user's data key, unwrapped, for the capsule's records kept outside the sealed
    profile (correction pairs): each record is sealed on its own, bound to its owner, its
    kind and its id, so a record cannot be moved to another user or row."""

    def __init__(self, key: bytes, tenant_id: str, user_id: str) -> None:
        self._sealer = Sealer(key)
        self._owner = (tenant_id, user_id)

    def seal(self, kind: str, record_id: str, plaintext: bytes) -> bytes:
        return self._sealer.seal(plaintext, self._record_binding(kind, record_id))

    def open(self, kind: str, record_id: str, sealed: bytes) -> bytes | None:
        """The plaintext, or None when the bytes were not sealed with this key for this record."""
        try:
            return self._sealer.open(sealed, self._record_binding(kind, record_id))
        except IntegrityError:
            return None

    def _record_binding(self, kind: str, record_id: str) -> bytes:
        return associated_data("learning-record", kind, *self._owner, record_id)


def _binding(tenant_id: str, user_id: str, version: int) -> bytes:
    return associated_data("learning-capsule", tenant_id, user_id, version)
