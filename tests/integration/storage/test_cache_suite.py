"""One contract suite for the cache port, on the in-process cache and on Redis."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from memmesh.storage.cache import Cache, MemoryCache, RedisCache, user_key


@pytest_asyncio.fixture(params=["memory", "redis"])
async def cache(request: pytest.FixtureRequest) -> AsyncIterator[Cache]:
    opened: Cache = (
        MemoryCache()
        if request.param == "memory"
        else RedisCache.from_url(request.getfixturevalue("redis_url"))
    )
    yield opened
    await opened.close()


def key() -> str:
    token = uuid.uuid4().hex
    return user_key(f"t-{token}", f"u-{token}", "state")


async def test_a_miss_is_none(cache: Cache) -> None:
    assert await cache.get(key()) is None


async def test_set_then_get_then_delete(cache: Cache) -> None:
    k = key()
    await cache.set(k, b"\x00value", ttl_s=60)
    assert await cache.get(k) == b"\x00value"
    await cache.delete(k)
    assert await cache.get(k) is None


async def test_add_never_overwrites_a_newer_write(cache: Cache) -> None:
    k = key()
    assert await cache.add(k, b"first", ttl_s=60)
    assert not await cache.add(k, b"stale fill", ttl_s=60)
    await cache.set(k, b"newer", ttl_s=60)
    assert await cache.get(k) == b"newer"


def test_user_keys_are_hash_tagged_per_user() -> None:
    assert user_key("t", "u", "state").startswith("memmesh:{t\x1fu}:")
    assert user_key("t", "u", "a") != user_key("t", "u2", "a")
