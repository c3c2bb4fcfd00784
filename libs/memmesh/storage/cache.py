"""The cache port: bytes by key with a time to live. In-process and Redis adapters."""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

import redis.asyncio as aioredis


class Cache(Protocol):
    """A cache of bytes; a miss is None. Keys are built with user_key()."""

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl_s: int) -> None: ...

    async def add(self, key: str, value: bytes, ttl_s: int) -> bool:
        """Set only if absent (read-through fills use it so they never overwrite a newer write)."""
        ...

    async def delete(self, *keys: str) -> None: ...

    async def close(self) -> None: ...


def user_key(tenant_id: str, user_id: str, *parts: str) -> str:
    """A key scoped to one user; the {…} hash tag keeps a user's keys on one Redis Cluster slot."""
    return ":".join(["memmesh", f"{{{tenant_id}\x1f{user_id}}}", *parts])


class MemoryCache:
    """A bounded in-process LRU, for the embedded mesh (no Redis). TTLs are not needed
    here: entries are invalidated on every change and the process owns the data."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._max_entries = max_entries

    async def get(self, key: str) -> bytes | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    async def add(self, key: str, value: bytes, ttl_s: int) -> bool:
        if key in self._entries:
            return False
        await self.set(key, value, ttl_s)
        return True

    async def delete(self, *keys: str) -> None:
        for key in keys:
            self._entries.pop(key, None)

    async def close(self) -> None:
        self._entries.clear()


class RedisCache:
    """Redis-backed cache shared by every process of an engine."""

    def __init__(self, client: aioredis.Redis) -> None:
        self._client = client

    @classmethod
    def from_url(cls, url: str) -> RedisCache:
        return cls(aioredis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0))

    async def get(self, key: str) -> bytes | None:
        value = await self._client.get(key)
        return value.encode() if isinstance(value, str) else value

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        await self._client.set(key, value, ex=ttl_s)

    async def add(self, key: str, value: bytes, ttl_s: int) -> bool:
        return bool(await self._client.set(key, value, ex=ttl_s, nx=True))

    async def delete(self, *keys: str) -> None:
        if keys:
            await self._client.delete(*keys)

    async def close(self) -> None:
        await self._client.aclose()


def open_cache(redis_url: str | None) -> Cache:
    """Redis when configured, else the in-process cache."""
    match redis_url:
        case None | "":
            return MemoryCache()
        case url:
            return RedisCache.from_url(url)
