"""The ExposureGuard's storage port (a user's rules) and its adapters, chosen by configuration."""

from __future__ import annotations

from typing import Protocol

from memmesh.engines.exposure_guard.rules import Rule, RuleId
from memmesh.runtime.settings import MeshSettings


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

    async def close(self) -> None: ...


async def open_rule_store(settings: MeshSettings) -> RuleStore:
    """SQLite under data_dir by default, PostgreSQL for a postgresql:// URL."""
    match settings.storage_url:
        case "sqlite":
            from memmesh.engines.exposure_guard.sqlite_store import SqliteRuleStore

            return SqliteRuleStore.open(settings.sqlite_path("exposure_guard"))
        case url if url.startswith(("postgresql://", "postgres://")):
            from memmesh.engines.exposure_guard.postgres_store import PostgresRuleStore

            return await PostgresRuleStore.open(url)
        case other:
            raise ValueError(f"unsupported storage_url {other!r}")
