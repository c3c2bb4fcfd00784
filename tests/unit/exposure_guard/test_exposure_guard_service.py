"""Use cases with fakes of the ports: rule changes go to the ledger first, caches follow."""

from __future__ import annotations

import pytest

from memmesh.engines.exposure_guard.domain.events import (
    RULE_SET,
    ForgetEvent,
    RuleEvent,
    rule_event,
)
from memmesh.engines.exposure_guard.domain.filtering import Exposed
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.rules import (
    Channel,
    Rule,
    RuleId,
    RuleKind,
    TargetType,
)
from memmesh.engines.exposure_guard.use_cases import ExposureGuardService
from memmesh.ledger_event import Linkable
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.errors import DependencyFailed
from memmesh.storage.cache import MemoryCache

ALICE, BOB = ("t-1", "alice"), ("t-1", "bob")
SISTER = RuleId(RuleKind.DO_NOT_MENTION, TargetType.TOPIC, "sister")


class FakeRuleStore:
    def __init__(self) -> None:
        self.rules: dict[tuple[str, str], dict[RuleId, Rule]] = {}
        self.reclaims = 0

    async def list_rules(self, tenant_id: str, user_id: str) -> list[Rule]:
        return sorted(self.rules.get((tenant_id, user_id), {}).values(), key=lambda r: r.id)

    async def get_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> Rule | None:
        return self.rules.get((tenant_id, user_id), {}).get(rule_id)

    async def add_rule(self, tenant_id: str, user_id: str, rule: Rule) -> bool:
        mine = self.rules.setdefault((tenant_id, user_id), {})
        if rule.id in mine:
            return False
        mine[rule.id] = rule
        return True

    async def remove_rule(self, tenant_id: str, user_id: str, rule_id: RuleId) -> bool:
        return self.rules.get((tenant_id, user_id), {}).pop(rule_id, None) is not None

    async def forget_user(self, tenant_id: str, user_id: str) -> list[Rule]:
        return sorted(self.rules.pop((tenant_id, user_id), {}).values(), key=lambda r: r.id)

    async def reclaim_erased(self) -> bool:
        self.reclaims += 1
        return True

    async def close(self) -> None:
        return None


class FakeLedger:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, RuleEvent]] = []
        self.forgets: list[tuple[str, str, ForgetEvent]] = []
        self.down = False

    async def record(self, tenant_id: str, user_id: str, event: RuleEvent) -> None:
        if self.down:
            raise DependencyFailed("ledger", "UNAVAILABLE")
        self.events.append((tenant_id, user_id, event))

    async def record_forget(self, tenant_id: str, user_id: str, event: ForgetEvent) -> None:
        if self.down:
            raise DependencyFailed("ledger", "UNAVAILABLE")
        self.forgets.append((tenant_id, user_id, event))


@pytest.fixture
def parts() -> tuple[ExposureGuardService, FakeRuleStore, FakeLedger]:
    store, ledger = FakeRuleStore(), FakeLedger()
    return ExposureGuardService(store, ledger, MemoryCache()), store, ledger


def sister_item() -> list[Exposed]:
    return [Exposed(Item("a", text="User has a sister."), Exposure.SAFE_TO_SPEAK)]


async def test_set_rule_records_a_reason_coded_event_with_a_hash_never_the_target(parts) -> None:  # type: ignore[no-untyped-def]
    service, store, ledger = parts
    rule, created = await service.set_rule(*ALICE, SISTER, "", 1_000)
    assert created and rule == Rule(SISTER, 1_000)
    [(tenant, user, event)] = ledger.events
    assert (tenant, user) == ALICE
    assert (event.event_type, event.reason_code, event.rule_kind, event.target_type) == (
        "EXPOSURE_RULE_SET",
        "USER_COMMAND",
        "DO_NOT_MENTION",
        "TOPIC",
    )
    # The target goes to the ledger writer only as Linkable (stored as a keyed hash).
    assert event.target == Linkable("sister")
    assert "sister" not in repr(event)


async def test_setting_a_rule_again_writes_nothing_and_a_retry_has_the_same_key(parts) -> None:  # type: ignore[no-untyped-def]
    service, _, ledger = parts
    await service.set_rule(*ALICE, SISTER, "STOP_MENTIONING", 1_000)
    rule, created = await service.set_rule(*ALICE, SISTER, "STOP_MENTIONING", 2_000)
    assert not created and rule.create_time_us == 1_000
    assert len(ledger.events) == 1 and ledger.events[0][2].reason_code == "STOP_MENTIONING"
    # A retry of the same request derives the same key, so the ledger records it once.
    assert rule_event(RULE_SET, *ALICE, SISTER, "STOP_MENTIONING", 1_000) == ledger.events[0][2]
    assert rule_event(RULE_SET, *ALICE, SISTER, "STOP_MENTIONING", 1_001).idempotency_key != (
        ledger.events[0][2].idempotency_key
    )


async def test_a_rule_applies_to_the_next_filter_even_after_the_rule_set_was_cached(parts) -> None:  # type: ignore[no-untyped-def]
    service, _, _ = parts
    before = await service.filter(
        *ALICE, sister_item(), Channel.VOICE, speak_text_allowed=False, user_asked=False
    )
    assert before.allowed_item_ids == ("a",)
    await service.set_rule(*ALICE, SISTER, "", 1)
    after = await service.filter(
        *ALICE, sister_item(), Channel.VOICE, speak_text_allowed=False, user_asked=False
    )
    assert after.allowed_item_ids == () and after.do_not_mention_hits == 1
    assert await service.remove_rule(*ALICE, SISTER, "", 2)
    again = await service.filter(
        *ALICE, sister_item(), Channel.VOICE, speak_text_allowed=False, user_asked=False
    )
    assert again.allowed_item_ids == ("a",)


async def test_rules_of_one_user_never_affect_another(parts) -> None:  # type: ignore[no-untyped-def]
    service, _, _ = parts
    await service.set_rule(*ALICE, SISTER, "", 1)
    bob = await service.filter(
        *BOB, sister_item(), Channel.VOICE, speak_text_allowed=False, user_asked=False
    )
    assert bob.allowed_item_ids == ("a",)
    assert await service.list_rules(*BOB) == []


async def test_nothing_is_stored_when_the_ledger_fails(parts) -> None:  # type: ignore[no-untyped-def]
    service, store, ledger = parts
    ledger.down = True
    with pytest.raises(DependencyFailed):
        await service.set_rule(*ALICE, SISTER, "", 1)
    assert await store.list_rules(*ALICE) == []


async def test_removing_an_unknown_rule_records_nothing(parts) -> None:  # type: ignore[no-untyped-def]
    service, _, ledger = parts
    assert not await service.remove_rule(*ALICE, SISTER, "", 1)
    assert ledger.events == []


async def test_check_store_names_the_do_not_store_rule_with_its_time(parts) -> None:  # type: ignore[no-untyped-def]
    service, _, _ = parts
    rule_id = RuleId(RuleKind.DO_NOT_STORE, TargetType.KEY, "identity.health")
    await service.set_rule(*ALICE, rule_id, "", 5)
    assert await service.check_store(*ALICE, Item("", key="identity.health.diet")) == Rule(
        rule_id, 5
    )
    assert await service.check_store(*ALICE, Item("", key="identity.name")) is None


async def test_forget_user_drops_rules_and_cached_copy_and_reclaims_once(parts) -> None:  # type: ignore[no-untyped-def]
    service, store, ledger = parts
    await service.set_rule(*ALICE, SISTER, "", 1_000)
    await service.set_rule(*BOB, SISTER, "", 1_000)
    assert (
        await service.filter(
            *ALICE, sister_item(), Channel.VOICE, speak_text_allowed=False, user_asked=False
        )
    ).allowed_item_ids == ()
    assert await service.forget_user(*ALICE, 2_000) == 1
    assert await service.list_rules(*ALICE) == []
    assert [r.id for r in await service.list_rules(*BOB)] == [SISTER]
    outcome = await service.filter(
        *ALICE, sister_item(), Channel.VOICE, speak_text_allowed=False, user_asked=False
    )
    assert outcome.allowed_item_ids == ("a",)
    assert store.reclaims == 1
    [(_, _, forgot)] = ledger.forgets
    assert forgot.removed_rule_count == 1
    # A repeat removes, records and reclaims nothing.
    assert await service.forget_user(*ALICE, 2_000) == 0
    assert len(ledger.forgets) == 1 and store.reclaims == 1


async def test_forget_user_keeps_the_rules_when_the_ledger_is_down(parts) -> None:  # type: ignore[no-untyped-def]
    service, store, ledger = parts
    await service.set_rule(*ALICE, SISTER, "", 1_000)
    ledger.down = True
    with pytest.raises(DependencyFailed):
        await service.forget_user(*ALICE, 2_000)
    assert [r.id for r in await service.list_rules(*ALICE)] == [SISTER]
    ledger.down = False
    assert await service.forget_user(*ALICE, 2_000) == 1
    assert await service.list_rules(*ALICE) == []
