"""Per-user subject keys of the Ledger, as every engine uses them: what the chain may hold
of a user's words is a keyed hash or a sealed value under the user's key, and the key is
held by the Ledger outside the chain, so destroying it (crypto-shredding) unlinks the
whole append-only stream from the user's words while `Verify` still passes.

    keys = SubjectKeys(ledger_grpc.LedgerServiceStub(channel))
    ring = await keys.current(tenant_id, user_id)     # made on first use, cached briefly
    ring.linkable("relationship.sister")               # "hm1:..." HMAC-SHA256
    await shred_subject_key(stub, tenant_id, user_id, now_us)   # "forget everything about me"

A cached key is kept at most `KEY_TTL_S`; appends name the key they were made with and the
Ledger refuses one made with a key that is no longer the user's, so a shredded key is never
used to write again. Secrets never appear in logs, reprs or spans.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections import OrderedDict
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

from memmesh.common.v1 import scope_pb2
from memmesh.ledger.v1 import ledger_service_pb2 as pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of

# How long a fetched key is used before it is asked for again.
KEY_TTL_S = 30.0
# Users whose keys one process keeps at most.
KEY_CACHE_SIZE = 4096

LINK_PREFIX = "hm1:"
KEY_PREFIX = "k1:"
SEAL_PREFIX = "sv1:"
_HMAC_LABEL = b"memmesh-ledger/hmac/v1"
_SIV_LABEL = b"memmesh-ledger/siv/v1"


class SubjectKeyring:
    """One user's key, ready to hash and seal: HMAC-SHA256 and AES-SIV keys derived from
    the secret, each for its own purpose."""

    def __init__(self, tenant_id: str, user_id: str, key_id: str, secret: bytes) -> None:
        self.tenant_id, self.user_id, self.key_id = tenant_id, user_id, key_id
        self._mac_key = hmac.new(secret, _HMAC_LABEL, hashlib.sha256).digest()
        self._siv = AESSIV(hmac.new(secret, _SIV_LABEL, hashlib.sha512).digest())

    def __repr__(self) -> str:  # never the secret
        return f"SubjectKeyring(key_id={self.key_id!r})"

    def _mac(self, purpose: bytes, text: str) -> str:
        return hmac.new(
            self._mac_key, purpose + b"\x1f" + text.encode(), hashlib.sha256
        ).hexdigest()

    def linkable(self, text: str) -> str:
        """The stored form of linkable content: equal text, equal value, under this key only."""
        return LINK_PREFIX + self._mac(b"value", text)[:40]

    def idempotency_key(self, key: str) -> str:
        """The stored form of a caller's idempotency key (a retry maps to the same value)."""
        return KEY_PREFIX + self._mac(b"idempotency", key)[:48]

    def _context(self, name: str) -> list[bytes]:
        return [self.tenant_id.encode(), self.user_id.encode(), name.encode()]

    def seal(self, name: str, text: str) -> str:
        """The stored form of content the owner reads back: AES-SIV, deterministic (a retried
        append is the same event), bound to the user and the attribute name."""
        sealed = self._siv.encrypt(text.encode(), self._context(name))
        return f"{SEAL_PREFIX}{self.key_id}:{base64.urlsafe_b64encode(sealed).decode().rstrip('=')}"

    def open(self, name: str, stored: str) -> str | None:
        """The text of a sealed value; None when it was sealed under another key (shredded)
        or is not a sealed value of this attribute."""
        prefix = f"{SEAL_PREFIX}{self.key_id}:"
        if not stored.startswith(prefix):
            return None
        body = stored[len(prefix) :]
        try:
            sealed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            return self._siv.decrypt(sealed, self._context(name)).decode()
        except (InvalidTag, ValueError):
            return None


def is_sealed(value: str) -> bool:
    """Whether a stored string attribute is a sealed value."""
    return value.startswith(SEAL_PREFIX)


@dataclass
class _Cached:
    ring: SubjectKeyring
    fetched_at: float


class SubjectKeys:
    """Fetches users' keys from the Ledger (GetSubjectKey, made on first use) and keeps each
    at most KEY_TTL_S after it was fetched, for at most KEY_CACHE_SIZE users."""

    def __init__(self, stub: pb_grpc.LedgerServiceStub, ttl_s: float = KEY_TTL_S) -> None:
        self._stub = stub
        self._ttl_s = ttl_s
        self._cache: OrderedDict[tuple[str, str], _Cached] = OrderedDict()

    async def current(self, tenant_id: str, user_id: str) -> SubjectKeyring:
        """The user's key, from the cache while it is fresh."""
        self._prune(time.monotonic())
        scope = (tenant_id, user_id)
        cached = self._cache.get(scope)
        if cached is not None:
            return cached.ring
        ring = await self.fetch(tenant_id, user_id)
        self._cache.pop(scope, None)
        self._cache[scope] = _Cached(ring, time.monotonic())
        self._prune(time.monotonic())
        return ring

    def _prune(self, now: float) -> None:
        """Drop keys older than the TTL (the cache is in fetch order, oldest first), so an
        idle user's key does not stay in memory either, and the oldest beyond the size cap."""
        while self._cache:
            oldest = next(iter(self._cache.values()))
            if now - oldest.fetched_at < self._ttl_s and len(self._cache) <= KEY_CACHE_SIZE:
                return
            self._cache.popitem(last=False)

    def __len__(self) -> int:
        """How many users' keys are held."""
        return len(self._cache)

    async def fetch(self, tenant_id: str, user_id: str) -> SubjectKeyring:
        """The user's key straight from the Ledger, bypassing the cache."""
        request = pb.GetSubjectKeyRequest(
            scope=scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)
        )
        reply = await call_engine("ledger", self._stub.GetSubjectKey(request))
        return SubjectKeyring(tenant_id, user_id, reply.key_id, reply.secret)

    def forget(self, tenant_id: str, user_id: str) -> None:
        """Drop the cached key (the Ledger said it is no longer the user's)."""
        self._cache.pop((tenant_id, user_id), None)


@dataclass(frozen=True)
class Shredded:
    """Outcome of a shred: whether a key existed, its id, and the chain event's sequence."""

    shredded: bool
    key_id: str
    sequence: int


async def shred_subject_key(
    stub: pb_grpc.LedgerServiceStub, tenant_id: str, user_id: str, now_us: int
) -> Shredded:
    """Destroy the user's subject key (crypto-shredding, for "forget everything about me"):
    afterwards no keyed hash or sealed value on the user's stream can be linked to their
    words, `Verify` still passes, and the next write makes a fresh key. Idempotent: a
    second call finds no key and reports shredded=False. Failures raise DependencyFailed."""
    request = pb.ShredSubjectKeyRequest(
        scope=scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id),
        now=timestamp_of(now_us),
    )
    reply = await call_engine("ledger", stub.ShredSubjectKey(request))
    return Shredded(reply.shredded, reply.key_id, reply.sequence)
