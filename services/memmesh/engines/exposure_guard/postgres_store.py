"""Exposure rules in PostgreSQL (schema `exposure_guard`)."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from memmesh.engines.exposure_guard.rules import Rule, RuleId, RuleKind, TargetType
from memmesh.storage.migrations import Migration
from memmesh.storage.postgres_db import open_pool

SCHEMA = "exposure_guard"

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE exposure_rules (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                target_type SMALLINT NOT NULL,
                target TEXT NOT NULL,
                create_time_us BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, kind, target_type, target)
            )""",
        ),
    ),
)


def _rule(row: tuple[str, int, str, int]) -> Rule:
    kind, target_type, target, create_us = row
    return Rule(RuleId(RuleKind(kind), TargetType(target_type), target), create_us)


class PostgresRuleStore:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, schema: str = SCHEMA) -> PostgresRuleStore:
        return cls(await open_pool(url, schema, MIGRATIONS))

    async def list_rules(self, tenant_id: str, user_id: str) -> list[Rule]:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                "SELECT kind, target_type, target, create_time_us FROM exposure_rules "
                "WHERE tenant_id = %s AND user_id = %s",
                (tenant_id, user_id),
            )
            rows = await cursor.fetchall()
        return sorted((_rule(row) for row in rows), key=lambda r: r.id)

    async def get_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> Rule | None:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                "SELECT kind, target_type, target, create_time_us FROM exposure_rules WHERE tenant_id = %s "
                "AND user_id = %s AND kind = %s AND target_type = %s AND target = %s",
                (tenant_id, user_id, rule_id.kind.value, int(rule_id.target_type), rule_id.target),
            )
            row = await cursor.fetchone()
        return _rule(row) if row else None

    async def add_rule(self, tenant_id: str, user_id: str, rule: Rule) -> bool:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                "INSERT INTO exposure_rules (tenant_id, user_id, kind, target_type, target, create_time_us) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (tenant_id, user_id, rule.id.kind.value, int(rule.id.target_type), rule.id.target, rule.create_time_us),
            )
            return cursor.rowcount == 1

    async def remove_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> bool:
        async with self._pool.connection() as connection:
            cursor = await connection.execute(
                "DELETE FROM exposure_rules WHERE tenant_id = %s AND user_id = %s AND kind = %s "
                "AND target_type = %s AND target = %s",
                (tenant_id, user_id, rule_id.kind.value, int(rule_id.target_type), rule_id.target),
            )
            return cursor.rowcount == 1

    async def close(self) -> None:
        await self._pool.close()
