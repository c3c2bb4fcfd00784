"""One contract suite for Current State's storage port, on SQLite and on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.engines.current_state.adapters.sql_store import SqlStateStore
from memmesh.engines.current_state.domain.state import DeviceSetting, UserState
from memmesh.engines.current_state.ports import StateStore


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StateStore]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened: StateStore = await SqlStateStore.open(url, tmp_path)
    yield opened
    await opened.close()


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


async def test_unknown_user_has_no_row(store: StateStore) -> None:
    assert await store.get(*user()) is None


async def test_save_round_trips_every_field(store: StateStore) -> None:
    who = user()
    state = UserState(
        display_name="Ana",
        primary_language="pt-BR",
        contact_preference="TEXT",
        timezone="Europe/Lisbon",
        retention_mode="REMEMBER_EVERYTHING",
        auto_resume_disabled=True,
        recall_only_when_asked=True,
        device_settings=(DeviceSetting("car", 6100),),
        last_session_id="s9",
        last_interaction_us=123,
        last_applied_package_id="PKG-1",
        version=1,
        ledger_sequence=7,
    )
    assert await store.save(*who, state, expected_version=0)
    assert await store.get(*who) == state


async def test_save_is_a_compare_and_set_on_the_version(store: StateStore) -> None:
    who = user()
    assert await store.save(*who, UserState(version=1), expected_version=0)
    assert not await store.save(*who, UserState(version=1, timezone="UTC"), expected_version=0)
    assert await store.save(*who, UserState(version=2, timezone="UTC"), expected_version=1)
    assert not await store.save(*who, UserState(version=3), expected_version=1)
    assert (await store.get(*who)) == UserState(version=2, timezone="UTC")


async def test_replace_overwrites_whatever_is_stored(store: StateStore) -> None:
    who = user()
    await store.save(*who, UserState(version=5), expected_version=0)
    await store.replace(*who, UserState(version=2, display_name="Bo"))
    assert (await store.get(*who)) == UserState(version=2, display_name="Bo")
