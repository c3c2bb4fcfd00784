"""One value per (user, session) the gateway must find on any replica for the rest of the
session (the thread it asked to resume, the work order it was offered): a cache entry (Redis
when configured) that expires with the session. A cache that does not answer is logged and
reads as empty: what is lost is a convenience of the session, never memory."""

from __future__ import annotations

import logging

from memmesh.common.v1 import scope_pb2
from memmesh.storage.cache import Cache, user_key

log = logging.getLogger("memmesh.gateway.sessions")

# Sessions end after 30 minutes of silence; a day covers any session.
TTL_S = 86_400


class SessionEntry:
    """The value named `name` of each session."""

    def __init__(self, cache: Cache, name: str) -> None:
        self._cache = cache
        self._name = name

    def _key(self, scope: scope_pb2.UserScope, session_id: str) -> str:
        return user_key(scope.tenant_id, scope.user_id, self._name, session_id)

    async def put(self, scope: scope_pb2.UserScope, session_id: str, value: str) -> None:
        try:
            await self._cache.set(self._key(scope, session_id), value.encode(), TTL_S)
        except Exception:
            log.warning("session cache unavailable (%s)", self._name)

    async def get(self, scope: scope_pb2.UserScope, session_id: str) -> str:
        try:
            raw = await self._cache.get(self._key(scope, session_id))
        except Exception:
            log.warning("session cache unavailable (%s)", self._name)
            return ""
        return raw.decode() if raw else ""

    async def clear(self, scope: scope_pb2.UserScope, session_id: str) -> None:
        try:
            await self._cache.delete(self._key(scope, session_id))
        except Exception:
            log.warning("session cache unavailable (%s)", self._name)
