"""Exposure rules in SQL: one text for SQLite (a file under data_dir) and PostgreSQL
(schema `exposure_guard`)."""

from __future__ import annotations

import json
from pathlib import Path

from memmesh.engines.exposure_guard.domain.rules import Rule, RuleId, RuleKind, TargetType
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, Row, open_database

ENGINE = "exposure_guard"

_COLUMNS = "kind, target_type, target, create_time_us, terms"
# Every table holding a user's data, reclaimed after ForgetUser.
_ERASED_TABLES = ("exposure_rules",)
_RULE_ID = "tenant_id = ? AND user_id = ? AND kind = ? AND target_type = ? AND target = ?"


def migrations_for(dialect: Dialect) -> tuple[Migration, ...]:
    """The rules' schema in the dialect's type names."""
    small_int = "INTEGER" if dialect is Dialect.SQLITE else "SMALLINT"
    return (
        Migration(
            1,
            (
                f"""CREATE TABLE exposure_rules (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                target_type {small_int} NOT NULL,
                target TEXT NOT NULL,
                create_time_us {dialect.big_int} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, kind, target_type, target)
            )""",
            ),
        ),
        # A DO_NOT_MENTION rule's subject terms (names and aliases), a JSON list of strings.
        Migration(2, ("ALTER TABLE exposure_rules ADD COLUMN terms TEXT NOT NULL DEFAULT ''",)),
    )


def _terms_text(terms: tuple[str, ...]) -> str:
    return json.dumps(list(terms), ensure_ascii=False, separators=(",", ":")) if terms else ""


def _terms_of(text: object) -> tuple[str, ...]:
    return tuple(str(term) for term in json.loads(str(text))) if text else ()


def _rule(row: Row) -> Rule:
    kind, target_type, target, create_us, terms = row
    return Rule(
        RuleId(RuleKind(kind), TargetType(target_type), str(target)),
        int(create_us),
        _terms_of(terms),
    )


def _key(tenant_id: str, user_id: str, rule_id: RuleId) -> tuple[str, str, str, int, str]:
    return (tenant_id, user_id, rule_id.kind.value, int(rule_id.target_type), rule_id.target)


class SqlRuleStore:
    """Each call is one statement; rules are keyed by (tenant, user, kind, target type, target)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @classmethod
    async def open(cls, storage_url: str, data_dir: Path) -> SqlRuleStore:
        return cls(await open_database(storage_url, ENGINE, migrations_for, data_dir))

    async def list_rules(self, tenant_id: str, user_id: str) -> list[Rule]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM exposure_rules WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
        return sorted((_rule(row) for row in rows), key=lambda r: r.id)

    async def get_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> Rule | None:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM exposure_rules WHERE {_RULE_ID}",
                _key(tenant_id, user_id, rule_id),
            )
        return _rule(row) if row else None

    async def add_rule(self, tenant_id: str, user_id: str, rule: Rule) -> bool:
        async with self._db.write() as tx:
            added = await tx.execute(
                f"INSERT INTO exposure_rules (tenant_id, user_id, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (*_key(tenant_id, user_id, rule.id), rule.create_time_us, _terms_text(rule.terms)),
            )
        return added == 1

    async def set_terms(
        self, tenant_id: str, user_id: str, rule_id: RuleId, terms: tuple[str, ...]
    ) -> bool:
        async with self._db.write() as tx:
            updated = await tx.execute(
                f"UPDATE exposure_rules SET terms = ? WHERE {_RULE_ID}",
                (_terms_text(terms), *_key(tenant_id, user_id, rule_id)),
            )
        return updated == 1

    async def remove_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> bool:
        async with self._db.write() as tx:
            removed = await tx.execute(
                f"DELETE FROM exposure_rules WHERE {_RULE_ID}", _key(tenant_id, user_id, rule_id)
            )
        return removed == 1

    async def forget_user(self, tenant_id: str, user_id: str) -> list[Rule]:
        async with self._db.write(tenant_id, user_id) as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM exposure_rules WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
            await tx.execute(
                "DELETE FROM exposure_rules WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
        return sorted((_rule(row) for row in rows), key=lambda r: r.id)

    async def reclaim_erased(self) -> bool:
        return await self._db.reclaim_erased(_ERASED_TABLES)

    async def close(self) -> None:
        await self._db.close()
