"""Continuity records: what the vault keeps and the outbox mirrors (seed 001 §2.13)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum

from memmesh.device.crypto import NONCE_BYTES, TAG_BYTES

_KIND = re.compile(r"[a-z_]{1,32}")
MAX_KEY_LEN = 256
# The mirror accepts ciphertexts of at most 64 KiB; sealing adds a nonce and a tag.
MAX_BODY_BYTES = 65_536 - NONCE_BYTES - TAG_BYTES


class RecordKind(StrEnum):
    """Kinds of continuity artifacts a new device must get back."""

    ATOM = "atom"
    DO_NOT_MENTION = "do_not_mention"
    DO_NOT_REPEAT = "do_not_repeat"
    CORRECTION = "correction"
    STATE_POINTER = "state_pointer"
    THREAD = "thread"
    LEARNING_POINTER = "learning_pointer"


@dataclass(frozen=True)
class ContinuityRecord:
    """One artifact at one version; body is the caller's serialized content (e.g. an Atom)."""

    kind: str
    key: str
    version: int
    body: bytes = b""
    tombstone: bool = False

    def __post_init__(self) -> None:
        if not _KIND.fullmatch(self.kind):
            raise ValueError(f"kind must match {_KIND.pattern}: {self.kind!r}")
        if not self.key or len(self.key) > MAX_KEY_LEN:
            raise ValueError(f"key must be 1 to {MAX_KEY_LEN} characters")
        if self.version < 0:
            raise ValueError("version must not be negative")
        if len(self.body) > MAX_BODY_BYTES:
            raise ValueError(f"body must be at most {MAX_BODY_BYTES} bytes")
        if self.tombstone and self.body:
            raise ValueError("a tombstone carries no body")


def tombstone(kind: str, key: str, version: int) -> ContinuityRecord:
    """The record that deletes an artifact (e.g. a forgotten atom) at a version."""
    return ContinuityRecord(kind, key, version, b"", tombstone=True)


def item_id_of(tenant_id: str, user_id: str, device_id: str, record: ContinuityRecord) -> str:
    """Deterministic outbox item id: the same record from the same device is the same item."""
    digest = hashlib.sha256()
    for part in (
        tenant_id,
        user_id,
        device_id,
        record.kind,
        record.key,
        str(record.version),
        str(int(record.tombstone)),
    ):
        raw = part.encode()
        digest.update(len(raw).to_bytes(4, "big") + raw)
    digest.update(hashlib.sha256(record.body).digest())
    return "oi-" + digest.hexdigest()[:48]
