"""Fakes of the composer's ports and builders of domain inputs for the unit tests."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memmesh.bundle_items import GuardItem
from memmesh.engines.context_composer.domain.model import (
    ComposeQuery,
    CorrectionPair,
    Entity,
    GuardVerdict,
    MemoryAtom,
    PendingWork,
    ResumeCandidate,
    Retrieved,
    SessionContext,
    SessionMemory,
    SpeechHints,
    TurnRecord,
    UserFacts,
)
from memmesh.errors import DependencyFailed

NOW_US = 1_767_225_600 * 1_000_000  # 2026-01-01T00:00:00Z
DAY_US = 86_400 * 1_000_000


def atom(index: int, **overrides: object) -> MemoryAtom:
    """A confirmed, fresh, speakable atom; overrides change any field."""
    values: dict[str, object] = {
        "atom_id": f"atom-{index:03d}",
        "key": f"preference.thing_{index:03d}",
        "text": f"User likes thing number {index}",
        "confidence_bp": 9000,
        "create_us": NOW_US - DAY_US,
        "confirm_us": NOW_US - DAY_US,
        "critical_tokens": (f"Thing{index}",),
        "evidence_turn_ids": (f"turn-{index}",),
    }
    values.update(overrides)
    return MemoryAtom(**values)  # type: ignore[arg-type]


def turn(
    index: int, session: str = "s-old", text: str | None = None, role: str = "USER"
) -> TurnRecord:
    return TurnRecord(
        f"turn-{index:03d}",
        session,
        role,
        text or f"I said something about topic {index}",
        NOW_US - (100 - index) * 1000,
    )


def query(text: str = "what do I like", **overrides: object) -> ComposeQuery:
    values: dict[str, object] = {
        "tenant_id": "t1",
        "user_id": "u1",
        "session_id": "s-now",
        "now_us": NOW_US,
        "mode": "IN_SESSION",
        "query": text,
        "channel": "VOICE",
    }
    values.update(overrides)
    return ComposeQuery(**values)  # type: ignore[arg-type]


_WORD = re.compile(r"[a-z]+")


@dataclass
class RuleGuard:
    """A guard with the ExposureGuard's semantics: exposure levels, channel, pull-only and
    DO_NOT_MENTION topics (whole words of the text or topics) and keys (dotted prefixes)."""

    do_not_mention_topics: set[str] = field(default_factory=set)
    do_not_mention_keys: set[str] = field(default_factory=set)
    calls: list[tuple[GuardItem, ...]] = field(default_factory=list)
    fail: DependencyFailed | None = None

    def blocked_by_rule(self, item: GuardItem) -> bool:
        words = set(_WORD.findall(item.text.lower())) | {t.lower() for t in item.topics}
        if words & self.do_not_mention_topics:
            return True
        return any(item.key == k or item.key.startswith(k + ".") for k in self.do_not_mention_keys)

    async def filter(
        self,
        tenant_id: str,
        user_id: str,
        channel: str,
        items: Sequence[GuardItem],
        speak_text_allowed: bool,
        user_asked: bool,
    ) -> GuardVerdict:
        if self.fail:
            raise self.fail
        self.calls.append(tuple(items))
        allowed, unsaid, hits = set(), set(), 0
        for item in items:
            if self.blocked_by_rule(item):
                hits += 1
                continue
            if item.exposure in ("INTERNAL_ONLY", "UNSPECIFIED", ""):
                continue
            if item.pull_only and not user_asked:
                continue
            allowed.add(item.item_id)
            said = speak_text_allowed or user_asked
            if item.exposure == "SAFE_TO_TEXT" and channel == "VOICE" and not said:
                unsaid.add(item.item_id)
        return GuardVerdict(frozenset(allowed), hits, frozenset(unsaid))


def pass_all(items: Sequence[GuardItem]) -> GuardVerdict:
    """A verdict letting every item through."""
    return GuardVerdict(frozenset(i.item_id for i in items), 0)


@dataclass
class FakeSources:
    """State, ranker, threads and corrections from fixed values; any may be set to fail."""

    facts: UserFacts = field(default_factory=UserFacts)
    retrieved: Retrieved = field(default_factory=Retrieved)
    session: SessionMemory = field(default_factory=SessionMemory)
    resume_candidate: ResumeCandidate = field(default_factory=ResumeCandidate)
    pairs: tuple[CorrectionPair, ...] = ()
    entities: tuple[Entity, ...] = ()
    pending_work: PendingWork | None = None
    failing: dict[str, DependencyFailed] = field(default_factory=dict)

    def _check(self, part: str) -> None:
        if part in self.failing:
            raise self.failing[part]

    async def user_facts(self, tenant_id: str, user_id: str) -> UserFacts:
        self._check("state")
        return self.facts

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
        self._check("ranker")
        return Retrieved(
            self.retrieved.atoms[:max_atoms],
            self.retrieved.turns[:max_turns],
            self.retrieved.digests[:max_digests],
        )

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
        """The ThreadStore's one answer: an open mode becomes IN_SESSION; a failed resume or a
        failed entities part is None; the entities are those next to an asked node."""
        self._check("working_memory")
        mode = "IN_SESSION" if mode == "UNSPECIFIED" else mode
        resume = None
        if mode == "SESSION_START":
            resume = None if "resume" in self.failing else self.resume_candidate
        known = set(entity_node_ids)
        entities: tuple[Entity, ...] | None = tuple(
            e for e in self.entities if e.related_node_id in known
        )
        if known and "entities" in self.failing:
            entities = None
        return SessionContext(mode, self.session, resume, entities)

    async def corrections(self, tenant_id: str, user_id: str) -> SpeechHints:
        self._check("corrections")
        return SpeechHints(tuple(self.pairs))


class StatePort:
    """Adapts FakeSources to the StateSource port (whose method is named `facts`)."""

    def __init__(self, sources: FakeSources) -> None:
        self._sources = sources

    async def facts(
        self, tenant_id: str, user_id: str, with_pending_work: bool = False
    ) -> tuple[UserFacts, PendingWork | None]:
        facts = await self._sources.user_facts(tenant_id, user_id)
        if not with_pending_work:
            return facts, None
        self._sources._check("work_orders")
        return facts, self._sources.pending_work
