"""AES-256-GCM sealing with associated data, so a record only opens where it was sealed.

Nonces are 96 random bits per seal (os.urandom), never derived or reused.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16


class IntegrityError(Exception):
    """A sealed record did not open: wrong key, tampered bytes or moved to another place."""


def new_key() -> bytes:
    """A fresh random 256-bit key (the caller stores it: device keystore or cloud KMS)."""
    return AESGCM.generate_key(bit_length=256)


def derive_key(secret: bytes, salt: bytes, purpose: str) -> bytes:
    """A 256-bit key derived with HKDF-SHA256 from a caller-held secret, one per purpose."""
    return HKDF(
        algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, info=purpose.encode()
    ).derive(secret)


def associated_data(*parts: str | int | bool) -> bytes:
    """Canonical length-prefixed encoding of the fields a ciphertext is bound to."""
    encoded = bytearray()
    for part in parts:
        raw = str(int(part)).encode() if isinstance(part, bool) else str(part).encode()
        encoded += len(raw).to_bytes(4, "big") + raw
    return bytes(encoded)


class Sealer:
    """Seals and opens with one key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"keys are {KEY_BYTES} bytes, got {len(key)}")
        self._aead = AESGCM(key)

    def seal(self, plaintext: bytes, associated: bytes) -> bytes:
        """nonce || ciphertext || tag."""
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, associated)

    def open(self, sealed: bytes, associated: bytes) -> bytes:
        """The plaintext; IntegrityError unless key, bytes and associated data all match."""
        if len(sealed) < NONCE_BYTES + TAG_BYTES:
            raise IntegrityError("sealed record is truncated")
        try:
            return self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], associated)
        except InvalidTag as failure:
            raise IntegrityError(
                "sealed record does not open with this key and binding"
            ) from failure
