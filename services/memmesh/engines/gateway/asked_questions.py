"""Clarification questions already asked in a session, so one left unanswered is not
asked again in that session (seed 001 §2.11.12). A bounded cache entry per session
(Redis when configured), not memory: it expires with the session."""

from __future__ import annotations

import json
import logging

from memmesh.storage.cache import Cache, user_key

log = logging.getLogger("memmesh.gateway.asked_questions")

# Sessions end after 30 minutes of silence; a day covers any session.
TTL_S = 86_400
MAX_IDS = 128


class AskedQuestions:
    def __init__(self, cache: Cache) -> None:
        self._cache = cache

    @staticmethod
    def _key(tenant_id: str, user_id: str, session_id: str) -> str:
        return user_key(tenant_id, user_id, "asked_questions", session_id)

    async def asked(self, tenant_id: str, user_id: str, session_id: str) -> list[str]:
        """Question ids asked earlier in the session, oldest first."""
        try:
            raw = await self._cache.get(self._key(tenant_id, user_id, session_id))
        except Exception:
            # A cache outage must not fail the turn; at worst a question comes back once.
            log.warning("asked-questions cache unavailable")
            return []
        return list(json.loads(raw)) if raw else []

    async def record(
        self, tenant_id: str, user_id: str, session_id: str, question_id: str, known: list[str]
    ) -> None:
        """Remember that the question was asked (the newest MAX_IDS are kept)."""
        if question_id in known:
            return
        ids = [*known, question_id][-MAX_IDS:]
        try:
            await self._cache.set(
                self._key(tenant_id, user_id, session_id), json.dumps(ids).encode(), TTL_S
            )
        except Exception:
            log.warning("asked-questions cache unavailable")
