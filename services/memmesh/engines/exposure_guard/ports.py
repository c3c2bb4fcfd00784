"""The ExposureGuard's ports: its rule store and the Ledger it records changes in."""

from __future__ import annotations

from typing import Protocol

from memmesh.engines.exposure_guard.domain.events import ForgetEvent, RuleEvent
from memmesh.engines.exposure_guard.domain.rules import Rule, RuleId
from memmesh.engines.exposure_guard.domain.subject import SubjectAtom


class RuleStore(Protocol):
    """Rules keyed by (tenant, user, kind, target type, target)."""

    async def list_rules(self, tenant_id: str, user_id: str) -> list[Rule]:
        """The user's rules sorted by id (kind, target type, target)."""
        ...

    async def get_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> Rule | None: ...

    async def add_rule(self, tenant_id: str, user_id: str, rule: Rule) -> bool:
        """Insert unless the id is stored; False (and nothing written) when it is."""
        ...

    async def remove_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> bool:
        """Delete; False when it was not stored."""
        ...

    async def set_terms(
        self, tenant_id: str, user_id: str, rule_id: RuleId, terms: tuple[str, ...]
    ) -> bool:
        """Replace a stored rule's subject terms; False when it is not stored."""
        ...

    async def forget_user(self, tenant_id: str, user_id: str) -> list[Rule]:
        """Delete every rule of the user; the rules deleted (none on a repeat)."""
        ...

    async def reclaim_erased(self) -> bool:
        """Make deleted bytes unreadable where the store can; False when it could not now."""
        ...

    async def close(self) -> None: ...


class RuleLedger(Protocol):
    """What the ExposureGuard needs from the Ledger engine."""

    async def record(self, tenant_id: str, user_id: str, event: RuleEvent) -> None:
        """Append the rule change; Conflict when its key is stored with other content."""
        ...

    async def record_forget(self, tenant_id: str, user_id: str, event: ForgetEvent) -> None:
        """Append the fact that the user's rules were forgotten (a count, no target)."""
        ...


class SubjectAtoms(Protocol):
    """The user's atoms, read when a DO_NOT_MENTION rule's subject is worked out (the
    AtomExtractor's capsule)."""

    async def atoms(self, tenant_id: str, user_id: str) -> list[SubjectAtom]:
        """Every current atom of the user (bounded); DependencyFailed when unreachable."""
        ...


class SubjectGraph(Protocol):
    """The user's entity graph (the ThreadStore's), read for the nodes linked to a subject."""

    async def linked_labels(self, tenant_id: str, user_id: str, node_ids: list[str]) -> list[str]:
        """Labels of the known nodes among node_ids and of their neighbours one edge away;
        DependencyFailed when unreachable."""
        ...
