"""The session buffer of working memory: a Redis list per (user, session), capped at 6 turns."""

from __future__ import annotations

import json
from collections.abc import Sequence

import redis.asyncio as aioredis

from memmesh.engines.thread_store.domain.model import Role, Turn
from memmesh.engines.thread_store.ports import TurnBuffer
from memmesh.policy.sensitivity import Exposure
from memmesh.storage.cache import user_key

BUFFER_TTL_S = 24 * 3_600

# Replace the list only with a newer version of it: two processes appending turns of one
# session may finish in either order, and the list must end up with the newest turns. And
# only while the user's erasure epoch is the one read before the turns were: a drop (every
# erasure drops) raises the epoch first, so turns read before an erasure committed can never
# be written back after it.
_REPLACE_IF_NEWER = """
if ARGV[3] ~= '' and tonumber(redis.call('GET', KEYS[3]) or '0') ~= tonumber(ARGV[3]) then
  return 0
end
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= stored then return 0 end
redis.call('DEL', KEYS[1])
if #ARGV > 3 then redis.call('RPUSH', KEYS[1], unpack(ARGV, 4)) end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""

# Raise the user's erasure epoch, then delete the keys (a session's list and version).
_DROP = """
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
if #KEYS > 1 then redis.call('DEL', unpack(KEYS, 2)) end
return 1
"""


def _glob_escaped(text: str) -> str:
    """The text as a literal in a Redis MATCH pattern (ids may hold * ? [ ] or backslash)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def encode_turn(turn: Turn) -> str:
    return json.dumps(
        {
            "id": turn.turn_id,
            "s": turn.session_id,
            "r": int(turn.role),
            "x": turn.text,
            "t": turn.time_us,
            "e": int(turn.exposure),
        },
        separators=(",", ":"),
        sort_keys=True,
    )


def decode_turn(raw: bytes | str) -> Turn:
    # A list written without exposures fails to decode, and working memory is read from the archive.
    data = json.loads(raw)
    return Turn(
        data["id"], data["s"], Role(data["r"]), data["x"], int(data["t"]), Exposure(data["e"])
    )


class RedisTurnBuffer:
    """Keys are hash-tagged per user, so a session's list and version share a cluster slot."""

    def __init__(self, client: aioredis.Redis, ttl_s: int = BUFFER_TTL_S) -> None:
        self._client = client
        self._ttl_s = ttl_s
        self._replace = client.register_script(_REPLACE_IF_NEWER)
        self._drop = client.register_script(_DROP)

    @classmethod
    def from_url(cls, url: str, ttl_s: int = BUFFER_TTL_S) -> RedisTurnBuffer:
        return cls(
            aioredis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0), ttl_s
        )

    @staticmethod
    def _keys(tenant_id: str, user_id: str, session_id: str) -> list[str]:
        base = user_key(tenant_id, user_id, "thread_store", "wm", session_id)
        return [base, base + ":version"]

    @staticmethod
    def _epoch_key(tenant_id: str, user_id: str) -> str:
        # Outside the sessions' pattern, so dropping the user's sessions keeps it.
        return user_key(tenant_id, user_id, "thread_store", "wm_epoch")

    async def epoch(self, tenant_id: str, user_id: str) -> int:
        raw = await self._client.get(self._epoch_key(tenant_id, user_id))
        return int(raw) if raw is not None else 0

    async def replace(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        version: int,
        turns: Sequence[Turn],
        epoch: int | None = None,
    ) -> None:
        await self._replace(
            keys=[*self._keys(tenant_id, user_id, session_id), self._epoch_key(tenant_id, user_id)],
            args=[
                version,
                self._ttl_s,
                "" if epoch is None else epoch,
                *(encode_turn(t) for t in turns),
            ],
        )

    async def recent(self, tenant_id: str, user_id: str, session_id: str) -> list[Turn] | None:
        raw = await self._client.lrange(self._keys(tenant_id, user_id, session_id)[0], 0, -1)
        return [decode_turn(item) for item in raw] if raw else None

    async def drop(self, tenant_id: str, user_id: str, session_id: str) -> None:
        await self._drop(
            keys=[self._epoch_key(tenant_id, user_id), *self._keys(tenant_id, user_id, session_id)],
            args=[self._ttl_s * 2],
        )

    async def drop_user(self, tenant_id: str, user_id: str) -> None:
        epoch = self._epoch_key(tenant_id, user_id)
        await self._drop(keys=[epoch], args=[self._ttl_s * 2])
        # The user's keys share one hash tag, so one pattern finds every session's list.
        pattern = _glob_escaped(user_key(tenant_id, user_id, "thread_store", "wm")) + ":*"
        batch: list[str | bytes] = [epoch]
        async for key in self._client.scan_iter(match=pattern, count=500):
            batch.append(key)
            if len(batch) >= 500:
                await self._drop(keys=batch, args=[self._ttl_s * 2])
                batch = [epoch]
        if len(batch) > 1:
            await self._drop(keys=batch, args=[self._ttl_s * 2])

    async def close(self) -> None:
        await self._client.aclose()


def open_turn_buffer(redis_url: str | None, ttl_s: int = BUFFER_TTL_S) -> TurnBuffer | None:
    """The Redis buffer when Redis is configured; without it working memory comes from the archive."""
    match redis_url:
        case None | "":
            return None
        case url:
            return RedisTurnBuffer.from_url(url, ttl_s)
