"""Per-user subject keys: the secret that every keyed hash and sealed value on a user's
stream is made with. Keys live beside the chain, never in it, so destroying one
(crypto-shredding) unlinks everything the append-only chain holds from the user's words
while the chain itself stays intact."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from memmesh.engines.ledger.domain.chain import Attribute, NewEvent

# Bytes of secret: HMAC-SHA256 and AES-SIV (512-bit) keys are derived from it.
SECRET_BYTES = 64
SUBJECT_KEY_SHREDDED = "SUBJECT_KEY_SHREDDED"
SHRED_REASON = "USER_ERASURE"


@dataclass(frozen=True)
class SubjectKey:
    """A user's current key: an opaque random id and the secret."""

    key_id: str
    secret: bytes

    def __repr__(self) -> str:  # the secret never reaches a log line or a span
        return f"SubjectKey(key_id={self.key_id!r}, secret=<{len(self.secret)} bytes>)"


@dataclass(frozen=True)
class ShredOutcome:
    """What a shred destroyed; key_id empty and sequence 0 when the user had no key."""

    shredded: bool
    key_id: str
    sequence: int


def new_subject_key() -> SubjectKey:
    """A fresh random key; its id says nothing about the user or the secret."""
    return SubjectKey(secrets.token_hex(8), secrets.token_bytes(SECRET_BYTES))


def shred_event(key_id: str, now_us: int) -> NewEvent:
    """The chain's record that a key was destroyed: the fact, never what it protected."""
    return NewEvent(
        idempotency_key=f"subject-key-shredded:{key_id}",
        event_type=SUBJECT_KEY_SHREDDED,
        reason_code=SHRED_REASON,
        attributes=(Attribute("key_id", "s", key_id),),
        occur_time_us=now_us,
    )
