"""Current State's domain and use cases with in-memory ports."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.engines.current_state.domain.state import (
    Change,
    UserState,
    apply_change,
    checksum,
    validate_change,
)
from memmesh.engines.current_state.ports import AppendedChange, LedgerRecord
from memmesh.engines.current_state.use_cases import CurrentStateService
from memmesh.runtime.errors import InvalidInput, VersionMismatch
from memmesh.storage.cache import MemoryCache


class MemoryLedger:
    """The user's stream in memory; other engines' events interleave with state events."""

    def __init__(self) -> None:
        self.events: list[tuple[int, str, Change | None]] = []

    def other_engine_event(self) -> None:
        self.events.append((len(self.events) + 1, "", None))

    async def append_change(
        self,
        tenant_id: str,
        user_id: str,
        change: Change,
        reason_code: str,
        idempotency_key: str,
        now_us: int,
        after_sequence: int | None = None,
    ) -> AppendedChange:
        for sequence, key, _ in self.events:
            if key == idempotency_key:
                return AppendedChange(sequence, True)
        state_events = [sequence for sequence, _, stored in self.events if stored is not None]
        follows = after_sequence == (state_events[-1] if state_events else 0)
        self.events.append((len(self.events) + 1, idempotency_key, change))
        return AppendedChange(len(self.events), False, follows)

    async def read_changes(
        self, tenant_id: str, user_id: str, after_sequence: int
    ) -> AsyncIterator[LedgerRecord]:
        for sequence, _, change in list(self.events):
            if sequence > after_sequence and change is not None:
                yield LedgerRecord(sequence, change)


class MemoryStore:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], UserState] = {}

    async def get(self, tenant_id: str, user_id: str) -> UserState | None:
        return self.rows.get((tenant_id, user_id))

    async def save(
        self, tenant_id: str, user_id: str, state: UserState, expected_version: int
    ) -> bool:
        current = self.rows.get((tenant_id, user_id))
        if (current.version if current else 0) != expected_version:
            return False
        self.rows[(tenant_id, user_id)] = state
        return True

    async def replace(self, tenant_id: str, user_id: str, state: UserState) -> None:
        self.rows[(tenant_id, user_id)] = state

    async def close(self) -> None:
        pass


def change(kind: str, **values: object) -> Change:
    return Change(kind, tuple(sorted(values.items())))  # type: ignore[arg-type]


CHANGES = st.one_of(
    st.builds(
        lambda n: change("display_name", value=n), st.sampled_from(["Ana", "Bo", "Kaiser", "Sam"])
    ),
    st.builds(
        lambda t: change("primary_language", value=t),
        st.sampled_from(["en", "en-GB", "pt-BR", "de"]),
    ),
    st.builds(lambda c: change("contact_preference", value=c), st.sampled_from(["SPEAK", "TEXT"])),
    st.builds(
        lambda z: change("timezone", value=z),
        st.sampled_from(["UTC", "Europe/Lisbon", "America/Los_Angeles"]),
    ),
    st.builds(
        lambda m: change("retention_mode", value=m),
        st.sampled_from(["DEFAULT", "REMEMBER_EVERYTHING"]),
    ),
    st.builds(
        lambda a, b: change("resume_preferences", auto_resume_disabled=a, recall_only_when_asked=b),
        st.booleans(),
        st.booleans(),
    ),
    st.builds(
        lambda d, w: change("device_setting", device_id=d, wake_threshold_bp=w),
        st.sampled_from(["kitchen", "car", "phone"]),
        st.integers(0, 10_000),
    ),
    st.builds(
        lambda s, t: change("interaction", session_id=s, interaction_time=t),
        st.sampled_from(["s1", "s2", "s3"]),
        st.integers(1_700_000_000_000_000, 1_800_000_000_000_000),
    ),
    st.builds(
        lambda fields: change("fill_profile", **fields),
        st.sampled_from(
            [
                {"display_name": "Ana"},
                {"primary_language": "es"},
                {"display_name": "Bo", "primary_language": "de"},
            ]
        ),
    ),
)


async def apply_all(
    service: CurrentStateService, ledger: MemoryLedger, changes: list[Change], noise: list[bool]
) -> None:
    for index, (item, interleave) in enumerate(zip(changes, noise, strict=False)):
        if interleave:
            ledger.other_engine_event()
        await service.apply(
            "t",
            "u",
            item,
            expected_version=None,
            reason_code="TEST",
            idempotency_key=f"k{index}",
            now_us=1,
        )


@settings(max_examples=150, deadline=None)
@given(
    changes=st.lists(CHANGES, max_size=25), noise=st.lists(st.booleans(), min_size=25, max_size=25)
)
def test_rebuild_from_the_ledger_has_the_live_checksum(
    changes: list[Change], noise: list[bool]
) -> None:
    async def scenario() -> None:
        ledger, store = MemoryLedger(), MemoryStore()
        service = CurrentStateService(store, ledger, MemoryCache())
        await apply_all(service, ledger, changes, noise)
        rebuilt = await service.rebuild("t", "u", replace_live=False)
        assert rebuilt.checksum == rebuilt.live_checksum
        # Every change is recorded except a fill that found its fields already set.
        recorded = [c for _, _, c in ledger.events if c is not None]
        assert rebuilt.events_replayed == len(recorded) == rebuilt.state.version
        assert len(recorded) >= len([c for c in changes if c.kind != "fill_profile"])

    asyncio.run(scenario())


async def test_apply_with_a_stale_expected_version_is_refused_and_writes_nothing() -> None:
    ledger, store = MemoryLedger(), MemoryStore()
    service = CurrentStateService(store, ledger, MemoryCache())
    await service.apply(
        "t",
        "u",
        change("display_name", value="Ana"),
        expected_version=0,
        reason_code="R",
        idempotency_key="a",
        now_us=1,
    )
    with pytest.raises(VersionMismatch):
        await service.apply(
            "t",
            "u",
            change("display_name", value="Bo"),
            expected_version=0,
            reason_code="R",
            idempotency_key="b",
            now_us=1,
        )
    assert len(ledger.events) == 1
    assert (await service.get("t", "u")).display_name == "Ana"


async def test_a_retried_apply_is_a_duplicate_and_changes_nothing() -> None:
    ledger, store = MemoryLedger(), MemoryStore()
    service = CurrentStateService(store, ledger, MemoryCache())
    first = await service.apply(
        "t",
        "u",
        change("timezone", value="UTC"),
        expected_version=None,
        reason_code="R",
        idempotency_key="same",
        now_us=1,
    )
    again = await service.apply(
        "t",
        "u",
        change("timezone", value="UTC"),
        expected_version=None,
        reason_code="R",
        idempotency_key="same",
        now_us=1,
    )
    assert again.duplicate and again.state == first.state
    assert len(ledger.events) == 1


async def test_an_event_appended_but_not_projected_is_projected_by_the_next_apply() -> None:
    ledger, store = MemoryLedger(), MemoryStore()
    service = CurrentStateService(store, ledger, MemoryCache())
    # A crash between the ledger append and the projection leaves the event unprojected.
    await ledger.append_change("t", "u", change("display_name", value="Ana"), "R", "state:lost", 1)
    applied = await service.apply(
        "t",
        "u",
        change("timezone", value="UTC"),
        expected_version=None,
        reason_code="R",
        idempotency_key="next",
        now_us=1,
    )
    assert applied.state.display_name == "Ana" and applied.state.timezone == "UTC"
    assert applied.state.version == 2


async def test_get_serves_the_new_state_right_after_apply() -> None:
    ledger, store = MemoryLedger(), MemoryStore()
    service = CurrentStateService(store, ledger, MemoryCache())
    assert (await service.get("t", "u")).version == 0  # fills the cache with the default
    await service.apply(
        "t",
        "u",
        change("display_name", value="Ana"),
        expected_version=0,
        reason_code="R",
        idempotency_key="a",
        now_us=1,
    )
    assert (await service.get("t", "u")).display_name == "Ana"


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (change("timezone", value="Mars/Olympus"), "change.set_timezone"),
        (change("primary_language", value="english please"), "change.set_primary_language"),
        (change("contact_preference", value=""), "change.set_contact_preference"),
        (
            change("device_setting", device_id="d", wake_threshold_bp=10_001),
            "change.set_device_setting.wake_threshold_bp",
        ),
        (change("display_name", value=""), "change.set_display_name"),
    ],
)
def test_bad_values_are_refused_naming_the_field(bad: Change, field: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        validate_change(bad)
    assert raised.value.violations[0].field == field


def test_the_latest_interaction_wins_whatever_the_arrival_order() -> None:
    early = change("interaction", session_id="s1", interaction_time=100)
    late = change("interaction", session_id="s2", interaction_time=200)
    one = apply_change(apply_change(UserState(), early, 1), late, 2)
    other = apply_change(apply_change(UserState(), late, 1), early, 2)
    assert (one.last_session_id, one.last_interaction_us) == ("s2", 200)
    assert (other.last_session_id, other.last_interaction_us) == ("s2", 200)


def test_checksum_changes_with_any_field() -> None:
    assert checksum(UserState()) == checksum(UserState())
    assert checksum(UserState()) != checksum(UserState(timezone="UTC"))


async def test_a_fill_sets_only_the_empty_fields_and_is_idempotent_by_key() -> None:
    ledger, store = MemoryLedger(), MemoryStore()
    service = CurrentStateService(store, ledger, MemoryCache())
    await service.apply(
        "t",
        "u",
        change("display_name", value="Ana"),
        expected_version=None,
        reason_code="R",
        idempotency_key="a",
        now_us=1,
    )
    fill = change("fill_profile", display_name="Bo", primary_language="es")
    filled = await service.apply(
        "t", "u", fill, expected_version=None, reason_code="R", idempotency_key="f", now_us=1
    )
    assert (filled.state.display_name, filled.state.primary_language) == ("Ana", "es")
    assert not filled.unchanged and filled.state.version == 2
    again = await service.apply(
        "t", "u", fill, expected_version=None, reason_code="R", idempotency_key="f", now_us=1
    )
    assert again.state == filled.state and len(ledger.events) == 2


async def test_a_fill_with_nothing_left_to_fill_records_nothing() -> None:
    ledger, store = MemoryLedger(), MemoryStore()
    service = CurrentStateService(store, ledger, MemoryCache())
    await service.apply(
        "t",
        "u",
        change("display_name", value="Ana"),
        expected_version=None,
        reason_code="R",
        idempotency_key="a",
        now_us=1,
    )
    applied = await service.apply(
        "t",
        "u",
        change("fill_profile", display_name="Bo"),
        expected_version=None,
        reason_code="R",
        idempotency_key="f",
        now_us=1,
    )
    assert applied.unchanged and applied.state.display_name == "Ana" and applied.state.version == 1
    assert len(ledger.events) == 1


def test_a_fill_decided_in_the_fold_keeps_a_value_set_before_it_in_the_stream() -> None:
    # Two fills racing: both recorded, the first in the stream wins, on replay too.
    state = apply_change(UserState(), change("fill_profile", display_name="Ana"), 1)
    state = apply_change(state, change("fill_profile", display_name="Bo", primary_language="es"), 2)
    assert (state.display_name, state.primary_language, state.version) == ("Ana", "es", 2)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (change("fill_profile"), "change.fill_empty_profile"),
        (change("fill_profile", timezone="UTC"), "change.fill_empty_profile"),
        (change("fill_profile", primary_language="english please"), "change.set_primary_language"),
    ],
)
def test_bad_fills_are_refused(bad: Change, field: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        validate_change(bad)
    assert raised.value.violations[0].field == field


def test_forget_profile_leaves_the_state_of_a_new_user_and_refuses_values():
    from memmesh.engines.current_state.domain.state import (
        Change,
        DeviceSetting,
        UserState,
        apply_change,
        validate_change,
    )
    from memmesh.errors import InvalidInput

    known = UserState(
        display_name="Kaiser",
        primary_language="de",
        timezone="Europe/Berlin",
        contact_preference="TEXT",
        device_settings=(DeviceSetting("kitchen", 4000),),
        last_session_id="s9",
        last_interaction_us=5,
        version=7,
        ledger_sequence=12,
    )
    forget = Change("forget_profile", ())
    validate_change(forget)
    after = apply_change(known, forget, 13)
    assert after == UserState(version=8, ledger_sequence=13)
    with pytest.raises(InvalidInput):
        validate_change(Change("forget_profile", (("value", "x"),)))
