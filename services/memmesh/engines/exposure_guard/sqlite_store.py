"""Exposure rules in an SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memmesh.engines.exposure_guard.rules import Rule, RuleId, RuleKind, TargetType
from memmesh.storage.migrations import Migration
from memmesh.storage.sqlite_db import open_sqlite

MIGRATIONS = (
    Migration(
        1,
        (
            """CREATE TABLE exposure_rules (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                target_type INTEGER NOT NULL,
                target TEXT NOT NULL,
                create_time_us INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id, kind, target_type, target)
            )""",
        ),
    ),
)


def _rule(row: tuple[str, int, str, int]) -> Rule:
    kind, target_type, target, create_us = row
    return Rule(RuleId(RuleKind(kind), TargetType(target_type), target), create_us)


class SqliteRuleStore:
    """One connection; each call is one short local statement, run on the event loop."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> SqliteRuleStore:
        return cls(open_sqlite(path, MIGRATIONS))

    async def list_rules(self, tenant_id: str, user_id: str) -> list[Rule]:
        rows = self._db.execute(
            "SELECT kind, target_type, target, create_time_us FROM exposure_rules "
            "WHERE tenant_id = ? AND user_id = ?",
            (tenant_id, user_id),
        ).fetchall()
        return sorted((_rule(row) for row in rows), key=lambda r: r.id)

    async def get_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> Rule | None:
        row = self._db.execute(
            "SELECT kind, target_type, target, create_time_us FROM exposure_rules WHERE tenant_id = ? "
            "AND user_id = ? AND kind = ? AND target_type = ? AND target = ?",
            (tenant_id, user_id, rule_id.kind.value, int(rule_id.target_type), rule_id.target),
        ).fetchone()
        return _rule(row) if row else None

    async def add_rule(self, tenant_id: str, user_id: str, rule: Rule) -> bool:
        cursor = self._db.execute(
            "INSERT INTO exposure_rules (tenant_id, user_id, kind, target_type, target, create_time_us) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (tenant_id, user_id, rule.id.kind.value, int(rule.id.target_type), rule.id.target, rule.create_time_us),
        )
        return cursor.rowcount == 1

    async def remove_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> bool:
        cursor = self._db.execute(
            "DELETE FROM exposure_rules WHERE tenant_id = ? AND user_id = ? AND kind = ? "
            "AND target_type = ? AND target = ?",
            (tenant_id, user_id, rule_id.kind.value, int(rule_id.target_type), rule_id.target),
        )
        return cursor.rowcount == 1

    async def close(self) -> None:
        self._db.close()
