"""The client SDK against the engines as real processes: typed results from every call,
sync and async alike, over TLS, errors as reason codes, deadlines from the turn budget, and the
session helper's 30-minute rule as the gateway sees it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import NOW_US, SECOND_US, TENANT_KEY, SteppingClock, gateway_settings, new_user_id

from memmesh.client import (
    BudgetSpent,
    GatewayCallFailed,
    MemoryClient,
    MemorySession,
    SyncMemoryClient,
    TurnBudget,
)
from memmesh.runtime.supervisor import Mesh

MINUTE_US = 60 * SECOND_US


def test_the_sync_client_answers_every_call_with_a_typed_result(mesh: Mesh) -> None:
    user_id = new_user_id()
    with SyncMemoryClient(gateway_settings(mesh)) as client:
        assert client.open_session(user_id, "s1", NOW_US) == "session_start"
        said = client.ingest(
            user_id, "s1", "t1", "user", "my sister Sarah lives in Chicago", NOW_US
        )
        assert (said.session_id, said.duplicate) == ("s1", False)
        again = client.ingest(
            user_id, "s1", "t1", "user", "my sister Sarah lives in Chicago", NOW_US
        )
        assert again.duplicate
        brief = client.brief(user_id, "s1", NOW_US + MINUTE_US, "what should I get my sister?")
        assert not brief.degraded and brief.reason_code == ""
        assert any("Sarah" in atom.text for atom in brief.bundle.atoms)
        assert brief.bundle.mode and isinstance(brief.degraded_parts, tuple)
        assert any("Sarah" in item for item in client.remember(user_id))
        command = client.command(user_id, "s1", "DO_NOT_MENTION", NOW_US + 2 * MINUTE_US, "sister")
        assert command.reason_code
        hidden = client.brief(user_id, "s1", NOW_US + 3 * MINUTE_US, "what should I get my sister?")
        assert not any("Sarah" in atom.text for atom in hidden.bundle.atoms)
        assert isinstance(client.close_session(user_id, "s1", NOW_US + 4 * MINUTE_US), str)


async def test_failures_come_back_as_reason_codes_and_a_spent_budget_makes_no_call(
    mesh: Mesh,
) -> None:
    wrong_key = replace(gateway_settings(mesh), tenant_key="not-" + TENANT_KEY)
    async with MemoryClient(wrong_key) as client:
        with pytest.raises(GatewayCallFailed) as failed:
            await client.brief(new_user_id(), "s1", NOW_US, "hello")
        assert failed.value.reason_code in ("UNAUTHENTICATED", "PERMISSION_DENIED")
    # The gateway speaks TLS only: without the CA configured, nothing gets through.
    plaintext = replace(gateway_settings(mesh), root_certificates=b"")
    async with MemoryClient(plaintext) as client:
        with pytest.raises(GatewayCallFailed) as refused:
            await client.brief(new_user_id(), "s1", NOW_US, "hello")
        assert refused.value.reason_code == "UNAVAILABLE"
    async with MemoryClient(gateway_settings(mesh)) as client:
        with pytest.raises(BudgetSpent):
            await client.brief(new_user_id(), "s1", NOW_US, "hello", budget=TurnBudget.of_ms(0))


async def test_the_session_helper_starts_a_new_session_after_thirty_minutes(mesh: Mesh) -> None:
    clock = SteppingClock()
    async with MemoryClient(gateway_settings(mesh)) as client:
        session = MemorySession(client, new_user_id(), clock_us=clock)
        first = await session.ingest("user", "I'm planning a trip to Porto")
        assert first.mode == "session_start"
        assert (await session.ingest("assistant", "Lovely, when?")).session_id == first.session_id
        clock.now_us += 10 * MINUTE_US
        assert (await session.ingest("user", "in May")).mode == "in_session"
        clock.now_us += 31 * MINUTE_US
        later = await session.ingest("user", "back again")
        assert later.session_id != first.session_id and later.mode == "session_start"
        assert session.ended_session_ids == [first.session_id]
        await session.close()
        assert session.ended_session_ids == [] and session.session_id == ""
