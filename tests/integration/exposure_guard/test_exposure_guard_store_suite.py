"""One contract suite for the ExposureGuard's rule store, on SQLite and on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.engines.exposure_guard.adapters.sql_store import SqlRuleStore
from memmesh.engines.exposure_guard.domain.rules import Rule, RuleId, RuleKind, TargetType
from memmesh.engines.exposure_guard.ports import RuleStore

DNM = RuleKind.DO_NOT_MENTION


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RuleStore]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened: RuleStore = await SqlRuleStore.open(url, tmp_path)
    yield opened
    await opened.close()


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


async def test_unknown_user_has_no_rules(store: RuleStore) -> None:
    who = user()
    assert await store.list_rules(*who) == []
    assert await store.get_rule(*who, RuleId(DNM, TargetType.TOPIC, "x")) is None
    assert not await store.remove_rule(*who, RuleId(DNM, TargetType.TOPIC, "x"))


async def test_add_is_insert_if_absent_and_keeps_the_first_time(store: RuleStore) -> None:
    who = user()
    rule_id = RuleId(DNM, TargetType.TOPIC, "sister")
    assert await store.add_rule(*who, Rule(rule_id, 100))
    assert not await store.add_rule(*who, Rule(rule_id, 200))
    assert await store.get_rule(*who, rule_id) == Rule(rule_id, 100)


async def test_list_is_sorted_by_kind_target_type_target(store: RuleStore) -> None:
    who = user()
    ids = [
        RuleId(RuleKind.PULL_ONLY, TargetType.KEY, "b"),
        RuleId(DNM, TargetType.THREAD, "T-1"),
        RuleId(DNM, TargetType.KEY, "b.c"),
        RuleId(DNM, TargetType.KEY, "B"),
        RuleId(RuleKind.DO_NOT_STORE, TargetType.TOPIC, "zeta"),
        RuleId(DNM, TargetType.TOPIC, "a"),
    ]
    for n, rule_id in enumerate(ids):
        await store.add_rule(*who, Rule(rule_id, n))
    assert [r.id for r in await store.list_rules(*who)] == sorted(ids)


async def test_same_target_under_different_kinds_or_types_are_different_rules(
    store: RuleStore,
) -> None:
    who = user()
    for kind in RuleKind:
        for target_type in (TargetType.KEY, TargetType.TOPIC):
            assert await store.add_rule(*who, Rule(RuleId(kind, target_type, "music"), 1))
    assert len(await store.list_rules(*who)) == 6


async def test_remove_deletes_one_rule_once(store: RuleStore) -> None:
    who = user()
    keep, drop = RuleId(DNM, TargetType.ATOM, "a-1"), RuleId(DNM, TargetType.ATOM, "a-2")
    await store.add_rule(*who, Rule(keep, 1))
    await store.add_rule(*who, Rule(drop, 1))
    assert await store.remove_rule(*who, drop)
    assert not await store.remove_rule(*who, drop)
    assert [r.id for r in await store.list_rules(*who)] == [keep]


async def test_users_never_see_each_other_s_rules(store: RuleStore) -> None:
    (tenant, alice), (_, bob) = user(), user()
    rule_id = RuleId(DNM, TargetType.TOPIC, "sister")
    await store.add_rule(tenant, alice, Rule(rule_id, 1))
    assert await store.list_rules(tenant, bob) == []
    assert await store.get_rule(tenant, bob, rule_id) is None
    assert not await store.remove_rule(tenant, bob, rule_id)
    assert await store.list_rules(f"{tenant}-other", alice) == []
