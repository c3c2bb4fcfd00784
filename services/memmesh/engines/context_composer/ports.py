"""The composer's outbound ports: one small Protocol per engine it reads. Each raises
memmesh.errors.DependencyFailed, naming the engine at fault, when its engine fails."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memmesh.bundle_items import GuardItem
from memmesh.engines.context_composer.domain.model import (
    GuardVerdict,
    PendingWork,
    Retrieved,
    SessionContext,
    SpeechHints,
    UserFacts,
)


class StateSource(Protocol):
    async def facts(
        self, tenant_id: str, user_id: str, with_pending_work: bool = False
    ) -> tuple[UserFacts, PendingWork | None]:
        """The user's Current State facts and, when asked (in the same call), the user's top
        pending work order the user has not asked to forget: the most recently updated,
        then by id."""
        ...


class Ranker(Protocol):
    async def retrieve(
        self,
        tenant_id: str,
        user_id: str,
        query: str,
        now_us: int,
        max_atoms: int,
        max_turns: int,
        max_digests: int,
    ) -> Retrieved:
        """Ranked candidates for the query."""
        ...


class Threads(Protocol):
    async def session_context(
        self,
        tenant_id: str,
        user_id: str,
        session_id: str,
        max_turns: int,
        now_us: int,
        mode: str,
        entity_node_ids: Sequence[str] = (),
        entity_fan_out: int = 0,
        resume_thread_id: str = "",
    ) -> SessionContext:
        """The mode (`mode`, or decided now when UNDECIDED), working memory, on a session start
        the resume candidate and the entities one graph edge away from the known nodes among
        `entity_node_ids` (the resume or the entities None when that Tier-2 part failed);
        with `resume_thread_id`, the resume part is that thread's, in session or not."""
        ...


class Guard(Protocol):
    async def filter(
        self,
        tenant_id: str,
        user_id: str,
        channel: str,
        items: Sequence[GuardItem],
        speak_text_allowed: bool,
        user_asked: bool,
    ) -> GuardVerdict:
        """Which items may pass on the channel."""
        ...


class Corrections(Protocol):
    async def corrections(self, tenant_id: str, user_id: str) -> SpeechHints:
        """The user's heard -> meant pairs and learned vocabulary (seed 001 §2.4)."""
        ...
